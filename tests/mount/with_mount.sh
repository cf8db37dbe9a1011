#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Mounts tierfs on a fresh directory, runs a test program on it and unmounts.
# With TIERFS_BIN given as the literal "tmpfs" a kernel tmpfs is mounted
# instead: the mount tests encode tmpfs behaviour and must pass there too.
#
# usage: with_mount.sh TIERFS_BIN OPTS -- PROG [ARGS...]
#   every ARG equal to @MNT@ is replaced by the mount point.
# Exits with PROG's status, 1 if mounting or unmounting failed, 77 (skip)
# where a mount is impossible (not root, no usable /dev/fuse, no fusermount3).

set -u

usage() {
	echo "usage: $0 TIERFS_BIN OPTS -- PROG [ARGS...]" >&2
	exit 1
}

skip() {
	echo "skip: $*"
	exit 77
}

[ $# -ge 4 ] || usage
bin=$1
opts=$2
shift 2
[ "$1" = "--" ] || usage
shift

[ "$(id -u)" = 0 ] || skip "not root"
if [ "$bin" != tmpfs ]; then
	( exec 3<>/dev/fuse ) 2>/dev/null || skip "/dev/fuse cannot be opened"
	command -v fusermount3 >/dev/null 2>&1 || skip "fusermount3 not found"
fi

mnt=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-mnt.XXXXXX") || exit 1

# Unlike mountpoint(1), this also sees a FUSE mount whose daemon died.
is_mounted() {
	awk -v mnt="$mnt" '$2 == mnt { found = 1 } END { exit !found }' /proc/self/mounts
}

unmount() {
	is_mounted || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if [ "$bin" = tmpfs ]; then
			umount "$mnt" 2>/dev/null && return 0
		else
			fusermount3 -u "$mnt" 2>/dev/null && return 0
		fi
		sleep 0.5
	done
	echo "error: $mnt still busy, detaching it lazily" >&2
	if [ "$bin" = tmpfs ]; then
		umount -l "$mnt"
	else
		fusermount3 -u -z "$mnt"
	fi
	return 1
}

# Leave no mount behind when killed (meson signals the whole process group).
trap 'unmount; rmdir "$mnt" 2>/dev/null; exit 1' HUP INT TERM

if [ "$bin" = tmpfs ]; then
	mount -t tmpfs -o "size=2G${opts:+,$opts}" tierfs-test "$mnt"
elif [ -n "$opts" ]; then
	"$bin" "$mnt" -o "$opts"
else
	"$bin" "$mnt"
fi
rc=$?
if [ $rc -ne 0 ]; then
	echo "error: mounting $bin on $mnt failed with status $rc" >&2
	rmdir "$mnt"
	exit 1
fi

waited=0
until is_mounted; do
	if [ $waited -ge 100 ]; then
		echo "error: $mnt not mounted after 10 s" >&2
		rmdir "$mnt" 2>/dev/null
		exit 1
	fi
	sleep 0.1
	waited=$((waited + 1))
done

nr_args=$#
i=0
while [ $i -lt "$nr_args" ]; do
	arg=$1
	shift
	[ "$arg" = "@MNT@" ] && arg=$mnt
	set -- "$@" "$arg"
	i=$((i + 1))
done

"$@"
rc=$?

if ! unmount; then
	echo "error: unmounting $mnt failed" >&2
	rc=1
fi
rmdir "$mnt" || rc=1
exit $rc
