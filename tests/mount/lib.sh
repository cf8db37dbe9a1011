# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Shared by the shell mount tests (sourced after setting tierctl): skip
# where no mount is possible, a work directory with a mount point that is
# unmounted and removed on exit, ok/fail counters, and tierctl's counters.

[ "$(id -u)" = 0 ] || { echo "skip: not root"; exit 77; }
( exec 3<>/dev/fuse ) 2>/dev/null || { echo "skip: /dev/fuse cannot be opened"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-test.XXXXXX") || exit 1
mnt=$work/mnt
mkdir "$mnt"
nr_passed=0
nr_failed=0

cleanup() {
	if grep -q " $mnt " /proc/self/mounts; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

ok() { nr_passed=$((nr_passed + 1)); echo "ok - $1"; }
fail() { nr_failed=$((nr_failed + 1)); echo "FAIL - $1: expected $2, got $3"; }

# One number of tierctl stats --json, by key (the first match).
stat_of() {
	"$tierctl" stats "$mnt" --json | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" | head -n 1
}

md5() { md5sum <"$1" | cut -d' ' -f1; }

# The last line, and the exit status.
finish() {
	echo "$nr_passed passed, $nr_failed failed"
	[ "$nr_failed" -eq 0 ]
}
