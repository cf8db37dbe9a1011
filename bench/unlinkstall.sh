#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Does freeing a big file hold other names up?  unlinkstall writes a file
# and unlinks it while another thread looks up names no cache can answer;
# run on kernel tmpfs (the anchor) and on tierfs, it prints the unlink's
# time and the slowest lookup during it against the slowest before it.
#
# Exit status: 0 done (nothing is enforced), 1 a step failed, 2 usage,
# 77 skipped (not root, /dev/fuse unusable).

# Functions run from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'USAGE'
usage: unlinkstall.sh --unlinkstall PATH [--tierfs PATH] [--size-mb N] [--rounds N]
                      [--quick]

  --unlinkstall PATH  the unlinkstall program (bench/unlinkstall.c)
  --tierfs PATH       tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --size-mb N         the file freed, MiB (2048)
  --rounds N          unlinks on each filesystem (5)
  --quick             --size-mb 16 --rounds 1 (smoke test)
USAGE
}

TIERFS=
PROG=
SIZE_MB=2048
ROUNDS=5
while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=$2; shift 2 ;;
	--unlinkstall) PROG=$2; shift 2 ;;
	--size-mb) SIZE_MB=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--quick) SIZE_MB=16 ROUNDS=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
NAME=unlinkstall
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$SIZE_MB" "$ROUNDS"
[ -x "$PROG" ] || { usage >&2; exit 2; }
PROG=$(abs_path "$PROG")
require_mount_bench
find_tierfs

WORK=$(mktemp -d /tmp/tierfs-unlinkstall.XXXXXX)
LOG=$WORK/log
PID=

cleanup()
{
	cd /
	unmount_daemon "$WORK/tierfs" "$PID"
	umount "$WORK/tmpfs" 2>/dev/null
	rm -rf "$WORK"
}
enter_work "$WORK/tmpfs" "$WORK/tierfs"

size=$(((SIZE_MB + 64) << 20))
mount -t tmpfs -o size=$size tmpfs "$WORK/tmpfs" || die "tmpfs mount failed"
"$TIERFS" "$WORK/tierfs" -f -o size=$size,mem=$((size >> 20))M,backend=none 2>>"$LOG" &
PID=$!
wait_mounted "$WORK/tierfs" "$PID" || die_daemon "tierfs mount" "$PID" "$LOG"

for fs in tmpfs tierfs; do
	echo "== $fs: $SIZE_MB MiB freed, $ROUNDS rounds"
	"$PROG" "$WORK/$fs" "$SIZE_MB" "$ROUNDS" || die "unlinkstall on $fs failed"
done
