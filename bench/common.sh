# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shared by the bench scripts (sourced, with NAME set to the script's name):
# skip (exit 77) and die (exit 1), and the checks every mount benchmark needs.

skip()
{
	echo "$NAME: skipped: $*" >&2
	exit 77
}

die()
{
	echo "$NAME: $*" >&2
	exit 1
}

# Root, a usable /dev/fuse, and the given tools, or skip.
require_mount_bench()
{
	local tool

	[ "$(id -u)" -eq 0 ] || skip "must run as root"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	{ : 3<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
	done
}
