#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Swap-in from many processes: N processes each write their own file, every
# page is pushed out to the swap tier, and then all N read theirs back at
# once with dd.  How long does each process wait, on tierfs (mem= budget,
# tierctl reclaim all) against a kernel tmpfs in a cgroup v1 memory cgroup of
# the same size swapping to zram (memory.force_empty)?  Prints per-process
# times and tierfs/kernel ratios; --results FILE also writes them for
# bench/run.
#
# Exit status: 0 done (nothing is enforced), 1 a step failed or the data read
# back differs, 2 usage, 77 skipped (not root, /dev/fuse unusable, no fio, no
# cgroup v1 memory controller, no zram).

# Functions run in the background and from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: swapin_many.sh [--tierfs PATH] [--tierctl PATH] [--procs N] [--file-mb N]
                      [--mem-mb N] [--backend B] [--compress PCT] [--quick]
                      [--results FILE]

  --tierfs PATH   tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH  tierctl binary (default: next to tierfs, else tierctl in PATH)
  --procs N       processes, each with its own file (4)
  --file-mb N     each process's file in MiB (1024)
  --mem-mb N      tierfs mem= and the kernel side's memory.limit_in_bytes (256)
  --backend B     tierfs backend= (zpool)
  --compress PCT  fio --buffer_compress_percentage of the data (50)
  --quick         --procs 2 --file-mb 128 (smoke test)
  --results FILE  append TSV records for bench/run (see bench/run)

Must run as root: it mounts, creates a memory cgroup and a zram swap device.
EOF
}

TIERFS=
TIERCTL=
NR_PROCS=4
FILE_MB=1024
MEM_MB=256
BACKEND=zpool
COMPRESS=50
QUICK=0
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--procs) NR_PROCS=${2-}; shift ;;
	--file-mb) FILE_MB=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--backend) BACKEND=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--quick) QUICK=1; NR_PROCS=2; FILE_MB=128 ;;
	--results) RESULTS=${2-}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "swapin_many.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=swapin_many.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$NR_PROCS" "$FILE_MB" "$MEM_MB"
want_percent --compress "$COMPRESS"

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio dd fusermount3 mkswap swapon swapoff findmnt md5sum flock
require_memcg_v1
require_zram
find_tierfs
find_tierctl
require_backend "$BACKEND"
zram_lock $((QUICK ? 240 : 3000))

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
DATA_MB=$((NR_PROCS * FILE_MB))
# The mounts, the zram disk and tierfs's swapsize hold all files and slack.
FS_MB=$((DATA_MB + 64))
SAMPLE_MB=$((FILE_MB < 16 ? FILE_MB : 16))

WORK=$(mktemp -d /tmp/tierfs-swapin.XXXXXX) || die "mktemp failed"
TMPFS_MNT=$WORK/tmpfs
TIERFS_MNT=$WORK/tierfs
LOG=$WORK/log
CG_BASE=$CG_ROOT/tierfs-bench-swapin.$$
CG=
DAEMON_PID=

cleanup()
{
	unmount_daemon "$TIERFS_MNT" "$DAEMON_PID"
	# The tmpfs goes before the swap device, so swapoff has nothing to read in.
	if is_mounted "$TMPFS_MNT"; then
		umount "$TMPFS_MNT" || umount -l "$TMPFS_MNT"
	fi
	zram_off || echo "$NAME: /dev/$ZRAM left behind: swapoff it by hand" >&2
	cg_remove "$CG_BASE"
	rm -f "$LOG" "$WORK"/times.* "$WORK"/stats.*
	cd / && rmdir "$TMPFS_MNT" "$TIERFS_MNT" "$WORK" 2>/dev/null
}
enter_work "$TMPFS_MNT" "$TIERFS_MNT"

# run CMD ARGS...: CMD in the side's cgroup when it has one.
run()
{
	if [ -n "$CG" ]; then
		in_cg "$CG" "$@"
	else
		"$@" 9>&-
	fi
}

# write_one MNT I: process I writes its file, FILE_MB of fixed-seed data.
write_one()
{
	run fio --name="w$2" --filename="$1/f$2" --rw=write --bs=1M --size="${FILE_MB}m" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed="$2" \
		--ioengine=psync --fallocate=none --minimal >/dev/null 2>>"$LOG"
}

read_one()
{
	run dd if="$1/f$2" of=/dev/null bs=1M status=none 2>>"$LOG"
}

# parallel KIND MNT: NR_PROCS processes run KIND_one at once; each records
# "I START_NS END_NS" in times.KIND.I.  Fails if one of them failed.
parallel()
{
	local i pids=() status=0

	for i in $(seq "$NR_PROCS"); do
		(
			start=$(now_ns)
			"$1_one" "$2" "$i" || exit 1
			echo "$i $start $(now_ns)" >"$WORK/times.$1.$i"
		) &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || status=1
	done
	return "$status"
}

declare -A R

# summarize KIND SIDE: per-process seconds, their mean and maximum, and the
# aggregate MiB/s over the wall time from the first start to the last end.
summarize()
{
	local line mean max agg each

	line=$(cat "$WORK"/times."$1".* | awk -v mb="$FILE_MB" -v n="$NR_PROCS" '
		{ s = ($3 - $2) / 1e9; t[$1] = s; sum += s; if (s > max) max = s
		  if (first == "" || $2 < first) first = $2; if ($3 > last) last = $3 }
		END {
			printf "%.2f %.2f %.0f", sum / n, max, n * mb / ((last - first) / 1e9)
			for (i = 1; i <= n; i++) printf " %.2f", t[i]
			printf "\n"
		}')
	read -r mean max agg each <<<"$line"
	R[$1_mean.$2]=$mean
	R[$1_max.$2]=$max
	R[$1_agg.$2]=$agg
	R[$1_each.$2]=${each// /,}
	rm -f "$WORK"/times."$1".*
}

# sample_md5 MNT: md5 of the first SAMPLE_MB of each file, after the timed read.
sample_md5()
{
	local i

	for i in $(seq "$NR_PROCS"); do
		run dd if="$1/f$i" bs=1M count="$SAMPLE_MB" status=none 2>>"$LOG" || return 1
	done | md5sum | cut -c1-12
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
echo "# tierfs swap-in from many processes: $(date -u '+%Y-%m-%d %H:%M:%S UTC')," \
	"kernel $(uname -r), $(nproc) CPUs, commit $commit"
echo "# $NR_PROCS processes x ${FILE_MB}MiB, fio write bs=1M psync" \
	"buffer_compress_percentage=$COMPRESS refill_buffers randseed=<process>; read back all at once" \
	"with dd bs=1M; quick=$QUICK"
echo "# kernel: tmpfs size=${FS_MB}m, writers and readers in a cgroup v1 memory cgroup" \
	"limit ${MEM_MB}MiB swappiness=100, zram lz4 disksize=${FS_MB}MiB; pushed out with" \
	"memory.force_empty"
echo "# tierfs: size=${FS_MB}m mem=${MEM_MB}m backend=$BACKEND compressor=lz4" \
	"swapsize=${FS_MB}m cache=auto; pushed out with tierctl reclaim all, the files' page" \
	"cache dropped (fadvise DONTNEED); tierfs=$TIERFS"

# --- kernel: tmpfs swapping to zram ------------------------------------------

echo "$NAME: kernel: $NR_PROCS writers" >&2
zram_on $((FS_MB * 1024 * 1024))
CG=$(cg_new "$CG_BASE" "$MEM_MB") || die "cannot create memory cgroup $CG_BASE"
mount -t tmpfs -o size="${FS_MB}m" tierfs-bench "$TMPFS_MNT" || die "tmpfs mount failed"
parallel write "$TMPFS_MNT" || die "kernel: a writer failed: $(tail -n 5 "$LOG")"
summarize write kernel
echo "$NAME: kernel: memory.force_empty" >&2
start=$(now_ns)
echo 0 >"$CG/memory.force_empty" 2>>"$LOG" || die "kernel: memory.force_empty failed"
R[pushout.kernel]=$(awk -v ns=$(($(now_ns) - start)) 'BEGIN { printf "%.2f\n", ns / 1e9 }')
R[resident.kernel]=$(($(cg_stat "$CG" shmem) / 1048576))
R[stored.kernel]=$(($(zram_mm_stat 1) / 1048576))
pswpin=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
echo "$NAME: kernel: $NR_PROCS readers" >&2
parallel read "$TMPFS_MNT" || die "kernel: a reader failed: $(tail -n 5 "$LOG")"
summarize read kernel
R[swapins.kernel]=$(( $(awk '$1 == "pswpin" { print $2 }' /proc/vmstat) - pswpin ))
R[md5.kernel]=$(sample_md5 "$TMPFS_MNT") || die "kernel: reading the samples failed"
R[oom.kernel]=$(cg_oom_kills "$CG")
umount "$TMPFS_MNT" || die "umount $TMPFS_MNT failed"
zram_off || die "cannot measure tierfs while /dev/$ZRAM is still a swap device"
cg_remove "$CG"
CG=

# --- tierfs ----------------------------------------------------------------------

echo "$NAME: tierfs: $NR_PROCS writers" >&2
"$TIERFS" "$TIERFS_MNT" -f -o "size=${FS_MB}m,mem=${MEM_MB}m,backend=$BACKEND,compressor=lz4,swapsize=${FS_MB}m" \
	2>>"$LOG" 9>&- &
DAEMON_PID=$!
wait_mounted "$TIERFS_MNT" "$DAEMON_PID" || die "tierfs did not mount $TIERFS_MNT: $(cat "$LOG")"
parallel write "$TIERFS_MNT" || die "tierfs: a writer failed: $(tail -n 5 "$LOG")"
summarize write tierfs
echo "$NAME: tierfs: tierctl reclaim all" >&2
start=$(now_ns)
"$TIERCTL" reclaim "$TIERFS_MNT" all >>"$LOG" 2>&1 || die "tierctl reclaim all failed: $(tail -n 3 "$LOG")"
"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.reclaim" 2>>"$LOG" || die "tierctl stats failed"
# A daemon whose "all" leaves pages resident (one where the size, rounded up,
# overflowed to 0 pages) is told the size instead, and the report says so.
RECLAIM_ARG=all
if [ "$(json_num resident_bytes "$WORK/stats.reclaim")" -gt 1048576 ]; then
	RECLAIM_ARG=${FS_MB}m
	"$TIERCTL" reclaim "$TIERFS_MNT" "$RECLAIM_ARG" >>"$LOG" 2>&1 ||
		die "tierctl reclaim $RECLAIM_ARG failed: $(tail -n 3 "$LOG")"
fi
R[pushout.tierfs]=$(awk -v ns=$(($(now_ns) - start)) 'BEGIN { printf "%.2f\n", ns / 1e9 }')
for i in $(seq "$NR_PROCS"); do
	dd if="$TIERFS_MNT/f$i" iflag=nocache count=0 status=none 2>>"$LOG" ||
		die "cannot drop the page cache of f$i"
done
"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.before" 2>>"$LOG" || die "tierctl stats failed"
R[resident.tierfs]=$(( $(json_num resident_bytes "$WORK/stats.before") / 1048576 ))
R[stored.tierfs]=$(( $(json_num stored_bytes "$WORK/stats.before") / 1048576 ))
echo "$NAME: tierfs: $NR_PROCS readers" >&2
parallel read "$TIERFS_MNT" || die "tierfs: a reader failed: $(tail -n 5 "$LOG")"
summarize read tierfs
"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.after" 2>>"$LOG" || die "tierctl stats failed"
R[swapins.tierfs]=$(( $(json_num swapins "$WORK/stats.after") - $(json_num swapins "$WORK/stats.before") ))
R[md5.tierfs]=$(sample_md5 "$TIERFS_MNT") || die "tierfs: reading the samples failed"
fusermount3 -u "$TIERFS_MNT" 2>>"$LOG" || die "fusermount3 -u $TIERFS_MNT failed"
wait "$DAEMON_PID"
R[daemon_exit]=$?
DAEMON_PID=

# --- report -------------------------------------------------------------------------

row()
{
	awk -v label="$1" -v unit="$2" -v a="${R[$3.kernel]}" -v b="${R[$3.tierfs]}" 'BEGIN {
		printf "%-40s | %12s | %12s | %5.2f\n", label, a " " unit, b " " unit, (a > 0 ? b / a : 0)
	}'
	result "$1" "$2" "${R[$3.tierfs]}" "tmpfs+zram" "${R[$3.kernel]}"
}

echo
printf '%-40s | %12s | %12s | %5s\n' metric tmpfs+zram tierfs ratio
row "parallel read, mean time per process" s read_mean
row "parallel read, slowest process" s read_max
row "parallel read, aggregate" MiB/s read_agg
row "push out (force_empty | reclaim all)" s pushout
row "parallel write, aggregate (set-up)" MiB/s write_agg
printf '%-40s | %12s | %12s |\n' "read time of each process (s)" "${R[read_each.kernel]}" \
	"${R[read_each.tierfs]}"
printf '%-40s | %12s | %12s |\n' "swapped out before the read (MiB)" "${R[stored.kernel]}" \
	"${R[stored.tierfs]}"
printf '%-40s | %12s | %12s |\n' "resident before the read (MiB)" "${R[resident.kernel]}" \
	"${R[resident.tierfs]}"
printf '%-40s | %12s | %12s |\n' "pages swapped in during the read" "${R[swapins.kernel]}" \
	"${R[swapins.tierfs]}"
printf '%-40s | %12s | %12s |\n' "md5 of ${SAMPLE_MB}MiB of each file" "${R[md5.kernel]}" \
	"${R[md5.tierfs]}"
echo "ratio: tierfs/kernel; lower is better for times. Kernel swap-ins: pswpin of /proc/vmstat" \
	"(machine-wide); tierfs: swapins of tierctl stats. Kernel OOM kills: ${R[oom.kernel]};" \
	"tierfs daemon exit status: ${R[daemon_exit]}"

param processes "$NR_PROCS, each ${FILE_MB} MiB, fio buffer_compress_percentage=$COMPRESS refill_buffers"
param read "all processes at once, dd bs=1M; time per process from its start to its end"
param kernel "tmpfs in a cgroup v1 memory cgroup, limit ${MEM_MB} MiB, swappiness 100, zram lz4; pushed out with memory.force_empty"
param tierfs "mem=${MEM_MB}m backend=$BACKEND compressor=lz4 swapsize=${FS_MB}m; tierctl reclaim all, page cache dropped"
[ "$RECLAIM_ARG" = all ] ||
	note "tierctl reclaim all left more than 1 MiB resident; the push-out time" \
		"includes a second tierctl reclaim $RECLAIM_ARG."
note "Swapped out before the read: kernel ${R[stored.kernel]} MiB (zram orig_data_size)," \
	"tierfs ${R[stored.tierfs]} MiB (stored_bytes) of ${DATA_MB} MiB; resident: kernel" \
	"${R[resident.kernel]} MiB (cgroup shmem), tierfs ${R[resident.tierfs]} MiB."
note "Pages swapped in during the read: kernel ${R[swapins.kernel]} (pswpin, machine-wide)," \
	"tierfs ${R[swapins.tierfs]} (swapins)."
plot swapin_each bars "Parallel read of swapped-out files: time of each process" process seconds
for side in kernel tierfs; do
	i=0
	for t in ${R[read_each.$side]//,/ }; do
		i=$((i + 1))
		point swapin_each "$([ "$side" = kernel ] && echo tmpfs+zram || echo tierfs)" "$i" "$t"
	done
done

if [ "${R[md5.kernel]}" != "${R[md5.tierfs]}" ]; then
	note "tierfs read back other data than the kernel tmpfs"
	echo "$NAME: tierfs read back other data than the kernel tmpfs" >&2
	exit 1
fi
exit 0
