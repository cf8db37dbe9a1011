#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Mounts tierfs on a fresh directory, runs a test program on it and unmounts.
# With TIERFS_BIN given as the literal "tmpfs" a kernel tmpfs is mounted
# instead: the mount tests encode tmpfs behaviour and must pass there too.
#
# usage: with_mount.sh TIERFS_BIN OPTS -- PROG [ARGS...]
#   every ARG equal to @MNT@ is replaced by the mount point, and @REDIS@ in
#   OPTS by the servers tests/unit/redis_env.sh started (TIERFS_TEST_REDIS).
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

case $opts in
*@REDIS@*)
	[ -n "${TIERFS_TEST_REDIS:-}" ] || skip "no Redis server to mount with"
	seeds=$(printf '%s' "$TIERFS_TEST_REDIS" | sed 's/,/\\,/g')
	opts=${opts%%@REDIS@*}$seeds${opts#*@REDIS@}
	;;
esac

. "$(dirname "$(realpath "$0")")/transport.sh"
transport_wrap "$bin"
bin=$wrapped

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
trap 'unmount; reap; rmdir "$mnt" 2>/dev/null; exit 1' HUP INT TERM

# The daemon runs in the foreground here so that its exit status and its
# stderr (sanitizer reports included) are part of the test's result.
log=$mnt.log
daemon=
if [ "$bin" = tmpfs ]; then
	if ! mount -t tmpfs -o "size=2G${opts:+,$opts}" tierfs-test "$mnt"; then
		rmdir "$mnt"
		exit 1
	fi
else
	"$bin" "$mnt" -f ${opts:+-o "$opts"} 2>"$log" &
	daemon=$!
fi

# Prints the daemon's log and returns its exit status once it has exited.
reap() {
	[ -n "$daemon" ] || return 0
	wait "$daemon"
	status=$?
	if [ $status -eq 0 ] && [ -n "${TIERFS_TEST_TRANSPORT:-}" ] &&
		! grep -q "transport: FUSE over io_uring" "$log"; then
		echo "error: the mount did not serve over io_uring" >&2
		status=1
	fi
	if [ $status -ne 0 ] || [ -s "$log" ]; then
		echo "daemon exited with status $status; its stderr:" >&2
		cat "$log" >&2
	fi
	rm -f "$log"
	return $status
}

waited=0
until is_mounted; do
	if [ $waited -ge 100 ] || { [ -n "$daemon" ] && ! kill -0 "$daemon" 2>/dev/null; }; then
		echo "error: $mnt not mounted" >&2
		[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
		reap
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
reap || rc=1
rmdir "$mnt" || rc=1
exit $rc
