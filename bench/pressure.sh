#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Under memory pressure, how does tierfs with its compressed pool (or its
# chain of a pool and a swap file) compare with a kernel tmpfs swapping to
# zram, or to a swap file behind zswap?  Each side runs, daemon and workload alike,
# in its own cgroup v1 memory cgroup with the same memory.limit_in_bytes and
# gets the same workload: fio writes more data than the limit, dd reads it
# back with the page cache dropped, fio reads 4 KiB at random with psync and
# then through mmap (a 256 MiB region a job at 1 GiB, uniform and zipf:1.2).  Prints
# one table with tierfs/kernel ratios, the compression ratio and the memory
# each pool spends per stored byte (zram's mm_stat against tierfs's backend
# counters); with --drain both limits are then lifted and swapoff is timed
# against tierctl drain; --results FILE also writes them for bench/run.
#
# Exit status: 0 done (targets are printed, never enforced), 1 a step could not
# run (a mount, a tool, a process killed by the OOM killer) or data read back
# was wrong, 2 usage, 77 skipped (not root, no /dev/fuse, no cgroup v1 memory
# controller, no zram, no fio).

# Functions run through step(), trap and stats hooks look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: pressure.sh [--tierfs PATH] [--tierctl PATH] [--limit-mb N] [--data-mb N]
                   [--mem-mb N] [--tierfs-limit-mb N|same-total] [--backend B]
                   [--runtime S] [--compress PCT] [--mmap-job-mb N] [--quick]
                   [--kernel zram|zswap] [--zswap-pool-pct N] [--swap-dir DIR]
                   [--drain] [--results FILE]

  --tierfs PATH   tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH  tierctl binary (default: next to tierfs, else tierctl in PATH)
  --limit-mb N    memory.limit_in_bytes of each side's cgroup in MiB (1024)
  --data-mb N     data fio writes, in MiB (3072)
  --mem-mb N      tierfs mem= in MiB (default 60 % of --limit-mb); 0: no mem=,
                  the budget comes from the cgroup's limit
  --tierfs-limit-mb N  tierfs's cgroup limit instead of --limit-mb, to see what
                  tierfs does with more room (the header says so); same-total:
                  --limit-mb plus the peak memory of zram's pool (mem_used_max),
                  which the kernel side used outside its cgroup
  --backend B     tierfs backend= (zpool); file:PATH fits a limit that zpool's
                  pool, charged to the cgroup, does not; zpool+file:PATH, the
                  chain, is the match for --kernel zswap
  --runtime S     seconds of each 4 KiB random read job (10)
  --compress PCT  fio --buffer_compress_percentage (50)
  --transport T   tierfs transport= (auto); uring-nopoll: the ring, ring_poll=0
  --mmap-job-mb N each mmap fio job reads its own N MiB region of the data
                  (default a quarter of --limit-mb: 256 at 1 GiB; as many jobs as
                  fit in --data-mb)
  --quick         --limit-mb 256 --data-mb 768 --runtime 3 (smoke test)
  --kernel K      the kernel side: zram (a zram swap device, lz4) or zswap (a
                  swap file in --swap-dir behind zswap, lz4,
                  max_pool_percent=20; zswap's settings are put back after);
                  each side's swap space is the mount's size (--data-mb + 288)
  --zswap-pool-pct N  zswap's max_pool_percent, a share of the machine's RAM
                  (20): its pool is not charged to a v1 cgroup, so at 20 it
                  holds all the data in RAM beside the cgroup; 1 (240 MiB
                  here) makes it write back to the file, as tierfs's chain does
  --swap-dir DIR  where --kernel zswap's swap file goes (/var/tmp)
  --drain         then lift both cgroups' limits and time swapoff against
                  tierctl drain (tierctl set mem= first: a lifted limit leaves
                  tierfs's budget where it was)
  --results FILE  append TSV records for bench/run (see bench/run)

Must run as root: it creates memory cgroups, a zram swap device and mounts.
Swap devices already on the machine are left alone (and named in the header).
EOF
}

TIERFS=
TIERCTL=
LIMIT_MB=1024
DATA_MB=3072
MEM_MB=
TIERFS_LIMIT_MB=
BACKEND=zpool
RUNTIME=10
COMPRESS=50
TRANSPORT=auto
MMAP_JOB_MB=
QUICK=0
RESULTS=
KERNEL=zram
ZSWAP_PCT=20
SWAP_DIR=/var/tmp
DRAIN=0

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--limit-mb) LIMIT_MB=${2-}; shift ;;
	--data-mb) DATA_MB=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--tierfs-limit-mb) TIERFS_LIMIT_MB=${2-}; shift ;;
	--backend) BACKEND=${2-}; shift ;;
	--runtime) RUNTIME=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--transport) TRANSPORT=${2-}; shift ;;
	--mmap-job-mb) MMAP_JOB_MB=${2-}; shift ;;
	--results) RESULTS=${2-}; shift ;;
	--kernel) KERNEL=${2-}; shift ;;
	--zswap-pool-pct) ZSWAP_PCT=${2-}; shift ;;
	--swap-dir) SWAP_DIR=${2-}; shift ;;
	--drain) DRAIN=1 ;;
	--quick) QUICK=1; LIMIT_MB=256; DATA_MB=768; RUNTIME=3 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "pressure.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

[ -n "$MEM_MB" ] || MEM_MB=$((LIMIT_MB * 6 / 10))
MEM_OPT=
[ "$MEM_MB" = 0 ] || MEM_OPT="mem=${MEM_MB}m,"
# A job's region a quarter of the limit: at a region as large as the limit,
# the kernel side was OOM-killed now and then (every page mapped and active).
[ -n "$MMAP_JOB_MB" ] || MMAP_JOB_MB=$((LIMIT_MB / 4))
[ -n "$TIERFS_LIMIT_MB" ] || TIERFS_LIMIT_MB=$LIMIT_MB
SAME_TOTAL=0
if [ "$TIERFS_LIMIT_MB" = same-total ]; then
	SAME_TOTAL=1
	TIERFS_LIMIT_MB=$LIMIT_MB
fi
NAME=pressure.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$LIMIT_MB" "$DATA_MB" "$TIERFS_LIMIT_MB" "$RUNTIME" "$MMAP_JOB_MB"
[[ "$MEM_MB" =~ ^[0-9]+$ ]] || die "--mem-mb wants a number of MiB, 0 for none"
case "$KERNEL" in
zram) KLABEL=tmpfs+zram ;;
zswap) KLABEL=tmpfs+zswap+swapfile ;;
*) echo "$NAME: --kernel wants zram or zswap, not '$KERNEL'" >&2; exit 2 ;;
esac
want_percent --compress "$COMPRESS"
want_positive "$ZSWAP_PCT"
want_percent --zswap-pool-pct "$ZSWAP_PCT"

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio fusermount3 mkswap swapon swapoff findmnt md5sum flock
require_memcg_v1
[ "$KERNEL" = zswap ] || require_zram
find_tierfs
find_tierctl
require_backend "$BACKEND"
zram_lock $((QUICK ? 240 : 3000))

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
# The verify file is written first, so the big write pushes it out to swap and
# the check at the end reads it back through swap-in.
VERIFY_MB=32
# Mount size: the data, the verify file and slack, the same on both sides;
# the swap space too (zram's disksize, the swap file, tierfs's swapsize), so
# that it holds every page.  With less swap than data, tierfs frees the copy
# of every page it reads back (a page might otherwise find no slot) and
# stores the page again at its next eviction.
FS_MB=$((DATA_MB + VERIFY_MB + 256))
SWAP_BYTES=$((FS_MB * 1024 * 1024))
# Each md5 sample of the data file, MiB; three: start, middle, end.
SAMPLE_MB=16
[ "$DATA_MB" -ge "$SAMPLE_MB" ] || die "--data-mb must be at least $SAMPLE_MB"
# The mmap jobs: one a MMAP_JOB_MB region of the data file, as many as fit.
NR_MMAP_JOBS=$((DATA_MB / MMAP_JOB_MB))
[ "$NR_MMAP_JOBS" -ge 1 ] || die "--mmap-job-mb must not exceed --data-mb"

WORK=$(mktemp -d /tmp/tierfs-pressure.XXXXXX) || die "mktemp failed"
TMPFS_MNT=$WORK/tmpfs
TIERFS_MNT=$WORK/tierfs
LOG=$WORK/log
SAMPLES=$WORK/samples
CG_BASE=$CG_ROOT/tierfs-bench.$$
DAEMON_PID=
SAMPLER_PID=

cleanup()
{
	[ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null
	unmount_daemon "$TIERFS_MNT" "$DAEMON_PID"
	# The tmpfs goes before the swap device, so swapoff has nothing to read in.
	if is_mounted "$TMPFS_MNT"; then
		umount "$TMPFS_MNT" || umount -l "$TMPFS_MNT"
	fi
	zram_off || echo "pressure.sh: /dev/$ZRAM left behind: swapoff it by hand" >&2
	zswap_off || echo "pressure.sh: $SWAPFILE left behind: swapoff it by hand" >&2
	cg_remove "$CG_BASE".kernel "$CG_BASE".tierfs
	rm -f "$LOG" "$SAMPLES" "$WORK"/stats.* "$WORK"/*.state
	cd / && rmdir "$TMPFS_MNT" "$TIERFS_MNT" "$WORK" 2>/dev/null
}
enter_work "$TMPFS_MNT" "$TIERFS_MNT"
: >"$SAMPLES"

# mib_per_s NS: DATA_MB over NS nanoseconds.
mib_per_s()
{
	awk -v mb="$DATA_MB" -v ns="$1" 'BEGIN { printf "%.0f\n", mb / (ns / 1e9) }'
}

declare -A R=([daemon_exit]=-)

# The workload, identical on both sides; every step runs inside CG.
# Each prints its result or returns non-zero.

write_verify_file()
{
	in_cg "$CG" fio --name=verify --filename="$1/verify" --rw=write --bs=1M \
		--size="${VERIFY_MB}m" --verify=crc32c --do_verify=0 --verify_state_save=0 --randseed=2 \
		--fallocate=none --ioengine=psync --minimal >/dev/null 2>>"$LOG"
}

check_verify_file()
{
	in_cg "$CG" fio --name=verify --filename="$1/verify" --rw=write --bs=1M \
		--size="${VERIFY_MB}m" --verify=crc32c --verify_only --verify_state_save=0 --randseed=2 \
		--fallocate=none --ioengine=psync --minimal >/dev/null 2>>"$LOG"
}

# MiB/s from the wall time of the whole fio run, end_fsync included.
seq_write()
{
	local start end

	start=$(now_ns)
	in_cg "$CG" fio --name=w --filename="$1/data" --rw=write --bs=1M --size="${DATA_MB}m" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed=1 \
		--ioengine=psync --end_fsync=1 --fallocate=none --minimal >/dev/null 2>>"$LOG" ||
		return 1
	end=$(now_ns)
	mib_per_s $((end - start))
}

# posix_fadvise(DONTNEED) on the data file only: drops tierfs's clean page
# cache, leaves tmpfs's pages (its only copy) alone, disturbs nothing else.
drop_cache()
{
	in_cg "$CG" dd if="$1/data" iflag=nocache count=0 status=none 2>>"$LOG"
}

seq_read()
{
	local start end

	start=$(now_ns)
	in_cg "$CG" dd if="$1/data" of=/dev/null bs=1M status=none 2>>"$LOG" || return 1
	end=$(now_ns)
	mib_per_s $((end - start))
}

# IOPS from fio's terse output (v3: error field 5, read IOPS field 8).
rand_read()
{
	local out

	out=$(in_cg "$CG" fio --name=r --filename="$1/data" --rw=randread --bs=4k \
		--size="${DATA_MB}m" --ioengine=psync --invalidate=0 --direct=0 \
		--runtime="$RUNTIME" --time_based --randseed=1 --minimal 2>>"$LOG") || return 1
	printf '%s\n' "$out" | awk -F';' '
		$1 == "3" { if ($5 != 0) exit 1; printf "%.0f\n", $8; found = 1 }
		END { exit !found }'
}

# mmap_read DIST MNT: NR_MMAP_JOBS fio jobs at once, each reading 4 KiB at
# random through mmap in its own MMAP_JOB_MB region of the data file, with
# random_distribution DIST; the jobs' IOPS summed (group_reporting).
mmap_read()
{
	local out

	out=$(in_cg "$CG" fio --name=m --filename="$2/data" --rw=randread --bs=4k \
		--ioengine=mmap --random_distribution="$1" --size="${MMAP_JOB_MB}m" \
		--offset_increment="${MMAP_JOB_MB}m" --numjobs="$NR_MMAP_JOBS" --group_reporting \
		--invalidate=0 --runtime="$RUNTIME" --time_based --randseed=1 --minimal \
		2>>"$LOG") || return 1
	printf '%s\n' "$out" | awk -F';' '
		$1 == "3" { if ($5 != 0) exit 1; printf "%.0f\n", $8; found = 1 }
		END { exit !found }'
}

mmap_uniform() { mmap_read random "$1"; }
mmap_zipf() { mmap_read zipf:1.2 "$1"; }

# One md5 over SAMPLE_MB at the start, the middle and the end of the data file.
md5_samples()
{
	local skip

	for skip in 0 $((DATA_MB / 2)) $((DATA_MB - SAMPLE_MB)); do
		in_cg "$CG" dd if="$1/data" bs=1M skip="$skip" count="$SAMPLE_MB" status=none \
			2>>"$LOG" || return 1
	done | md5sum | cut -c1-12
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

# side_alive SIDE: the daemon (tierfs) is still running and nothing in the
# cgroup was OOM-killed.
side_alive()
{
	[ "$(cg_oom_kills "$CG")" -eq 0 ] || return 1
	[ "$1" = kernel ] || kill -0 "$DAEMON_PID" 2>/dev/null
}

# step SIDE KEY FUNCTION MNT: runs FUNCTION and stores its output in R[KEY.SIDE];
# after the first failure the remaining steps of the side are not run.
step()
{
	local side=$1 key=$2 value

	[ "${R[failed.$side]-}" = "" ] || return 1
	echo "pressure.sh: $side: $key" >&2
	if ! value=$("$3" "$4") || ! side_alive "$side"; then
		side_alive "$side" || R[oom.$side]=yes
		R[failed.$side]=$key
		echo "pressure.sh: $side: $key failed" >&2
		return 1
	fi
	R[$key.$side]=$value
}

# sampler: every 0.2 s one line "resident_bytes pool_bytes daemon_rss cgroup_usage
# stored_bytes backed_bytes" (backed: the page pool's populated pages, the free
# stock included)
# while tierfs runs, for the peaks in the report.
sampler()
{
	local json=$WORK/stats.sample rss

	while :; do
		if "$TIERCTL" stats "$TIERFS_MNT" --json >"$json" 2>/dev/null; then
			rss=$(awk '/^VmRSS:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$DAEMON_PID/status" 2>/dev/null)
			echo "$(json_num resident_bytes "$json") $(json_num pool_bytes "$json")" \
				"${rss:-0} $(cat "$CG/memory.usage_in_bytes")" \
				"$(json_num stored_bytes "$json") $(json_num backed_bytes "$json")" \
				>>"$SAMPLES"
		fi
		sleep 0.2
	done
}

# run_side SIDE MNT: the whole workload; stats_fn is called right after the
# write to record memory per stored byte.
run_side()
{
	local side=$1 mnt=$2 stats_fn=$3 start

	start=$(now_ns)
	R[oom.$side]=no
	step "$side" verify_write write_verify_file "$mnt"
	step "$side" write seq_write "$mnt" && "$stats_fn"
	step "$side" drop drop_cache "$mnt"
	step "$side" read seq_read "$mnt"
	step "$side" randread rand_read "$mnt"
	step "$side" mmap_uniform mmap_uniform "$mnt"
	step "$side" mmap_zipf mmap_zipf "$mnt"
	step "$side" verify check_verify_file "$mnt" && R[verify.$side]=ok
	step "$side" md5 md5_samples "$mnt"
	[ "$side" = tierfs ] && transport_stats
	side_alive "$side" || R[oom.$side]=yes
	R[oom_kills.$side]=$(cg_oom_kills "$CG")
	R[failcnt.$side]=$(cat "$CG/memory.failcnt" "$CG/memory.memsw.failcnt" 2>/dev/null |
		awk '{ n += $1 } END { print n + 0 }')
	R[peak.$side]=$(cat "$CG/memory.max_usage_in_bytes")
	R[secs.$side]=$(( ($(now_ns) - start) / 1000000000 ))
	# Last, with the limits lifted: the peak and the time above are the workload's.
	if [ "$DRAIN" = 1 ]; then
		step "$side" drain "drain_$side" "$mnt"
		step "$side" md5_drained md5_samples "$mnt"
		[ "${R[md5_drained.$side]-}" = "${R[md5.$side]-}" ] || R[failed.$side]=md5_drained
	fi
}

kernel_stats()
{
	local orig compr used wb out

	if [ "$KERNEL" = zswap ]; then
		R[stored.kernel]=$(meminfo_bytes Zswapped)
		R[compr.kernel]=$(meminfo_bytes Zswap)
		R[poolmem.kernel]=${R[compr.kernel]}
		R[swapfile.kernel]=$(awk -v f="$SWAPFILE" '$1 == f { printf "%.0f\n", $4 * 1024 }' /proc/swaps)
		wb=$(vmstat_count zswpwb)
		out=$(vmstat_count pswpout)
		R[writebacks.kernel]=$((wb - ZSWPWB0))
		R[huge.kernel]=$((out - PSWPOUT0 - wb + ZSWPWB0))
		[ "${R[compr.kernel]}" -gt 0 ] && R[ratio.kernel]=$(awk -v o="${R[stored.kernel]}" \
			-v c="${R[compr.kernel]}" 'BEGIN { printf "%.2f\n", o / c }')
		return
	fi
	# mm_stat: orig_data_size compr_data_size mem_used_total ...
	read -r orig compr used _ <"/sys/block/$ZRAM/mm_stat" || return
	R[stored.kernel]=$orig
	R[compr.kernel]=$compr
	R[poolmem.kernel]=$used
	[ "$compr" -gt 0 ] && R[ratio.kernel]=$(awk -v o="$orig" -v c="$compr" \
		'BEGIN { printf "%.2f\n", o / c }')
}

# How the workload's requests came: over the ring, and how many of those
# went to a worker (the ring's thread must not wait).
transport_stats()
{
	local json=$WORK/stats.end

	"$TIERCTL" stats "$TIERFS_MNT" --json >"$json" 2>>"$LOG" || return
	R[transport]=$(sed -n 's/.*"transport":{"mode":"\([a-z]*\)".*/\1/p' "$json")
	R[ring_requests]=$(json_num ring_requests "$json")
	R[handoffs]=$(json_num handoffs "$json")
}

tierfs_stats()
{
	local json=$WORK/stats.write

	"$TIERCTL" stats "$TIERFS_MNT" --json >"$json" 2>>"$LOG" || return
	R[stored.tierfs]=$(json_num stored_bytes "$json")
	R[poolmem.tierfs]=$(json_num pool_bytes "$json")
	R[compr.tierfs]=
	R[ratio.tierfs]=$(json_num compression_ratio "$json")
	R[resident.tierfs]=$(json_num resident_bytes "$json")
	R[budget.tierfs]=$(json_num mem_budget_bytes "$json")
	# A chain: its RAM tier is the pool; the last tier's share is on disk, or
	# on the redis servers, outside the cgroup (the values they hold).
	if grep -q '"tiers"' "$json"; then
		read -r "R[stored.tierfs]" "R[poolmem.tierfs]" "R[ratio.tierfs]" \
			"R[filetier.tierfs]" "R[writebacks.tierfs]" "R[huge.tierfs]" \
			"R[outside.tierfs]" <<<"$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["backend"]["tiers"]
print(t[0]["stored_bytes"], t[0]["pool_bytes"], t[0]["compression_ratio"],
      t[1]["stored_bytes"], t[0]["writebacks"], t[0]["rejects_huge"],
      t[1]["pool_bytes"] if t[1]["name"] == "redis" else 0)' "$json")"
	fi
}

# drain_kernel: the cgroup's limit lifted, swapoff of the swap device timed
# (it brings every swapped page of the tmpfs back).
drain_kernel()
{
	local start end dev=/dev/$ZRAM

	[ "$KERNEL" = zram ] || dev=$SWAPFILE
	echo -1 >"$CG/memory.limit_in_bytes" || return 1
	start=$(now_ns)
	swapoff "$dev" 2>>"$LOG" || return 1
	end=$(now_ns)
	awk -v ns=$((end - start)) 'BEGIN { printf "%.2f\n", ns / 1e9 }'
}

# drain_tierfs: the cgroup's limits lifted and the budget raised to the
# mount's size, tierctl drain timed; it must leave no page stored.
drain_tierfs()
{
	local start end

	# The peaks sampled are the workload's, not the drain's.
	kill "$SAMPLER_PID" 2>/dev/null
	echo -1 >"$CG/memory.memsw.limit_in_bytes" 2>/dev/null
	echo -1 >"$CG/memory.limit_in_bytes" || return 1
	# Once the daemon has seen the limit go (it polls its cgroup).
	for _ in $(seq 100); do
		"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.drain" 2>>"$LOG" || return 1
		[ "$(json_num mem_limit_bytes "$WORK/stats.drain")" -gt $((TIERFS_LIMIT_MB << 20)) ] &&
			break
		sleep 0.1
	done
	"$TIERCTL" set "$TIERFS_MNT" mem="${FS_MB}m" >/dev/null 2>>"$LOG" || return 1
	start=$(now_ns)
	"$TIERCTL" drain "$TIERFS_MNT" >/dev/null 2>>"$LOG" || return 1
	end=$(now_ns)
	"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.drain" 2>>"$LOG" || return 1
	[ "$(json_num stored_pages "$WORK/stats.drain")" = 0 ] || return 1
	awk -v ns=$((end - start)) 'BEGIN { printf "%.2f\n", ns / 1e9 }'
}

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
other_swap=$(awk 'NR > 1 { printf "%s%s", sep, $1; sep = "," }' /proc/swaps)
echo "# tierfs pressure benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"commit $commit"
echo "# cgroup v1 memory.limit_in_bytes=${LIMIT_MB}MiB swappiness=100 per side; data=${DATA_MB}MiB" \
	"quick=$QUICK runtime=${RUNTIME}s"
echo "# fio write: bs=1M psync buffer_compress_percentage=$COMPRESS refill_buffers randseed=1" \
	"end_fsync=1 fallocate=none (MiB/s = data / wall time)"
echo "# read: page cache of the file dropped (dd iflag=nocache count=0, fadvise DONTNEED);" \
	"dd bs=1M (MiB/s); then fio randread bs=4k psync invalidate=0 ${RUNTIME}s randseed=1 (IOPS)"
echo "# mmap: fio randread bs=4k ioengine=mmap numjobs=$NR_MMAP_JOBS, job i reads" \
	"[i*${MMAP_JOB_MB}MiB, +${MMAP_JOB_MB}MiB) of the data, random_distribution=random" \
	"and zipf:1.2, ${RUNTIME}s each, group_reporting (IOPS summed)"
if [ "$KERNEL" = zram ]; then
	echo "# kernel: tmpfs size=${FS_MB}m + zram swap lz4 disksize=${FS_MB}MiB priority 32767"
else
	echo "# kernel: tmpfs size=${FS_MB}m + zswap max_pool_percent=$ZSWAP_PCT + swap file" \
		"${FS_MB}MiB in $SWAP_DIR priority 32767; zswap's compressor: lz4 if the kernel's" \
		"crypto API has it, else lzo (the line after the kernel run says)"
fi
[ "$BACKEND" = zpool ] ||
	echo "# NOTE: tierfs runs with backend=$BACKEND, not the zpool the question is about"
[ "$TIERFS_LIMIT_MB" = "$LIMIT_MB" ] ||
	echo "# NOTE: tierfs's cgroup limit is ${TIERFS_LIMIT_MB}MiB, not the kernel's ${LIMIT_MB}MiB"
[ "$SAME_TOTAL" = 0 ] ||
	echo "# NOTE: tierfs's cgroup limit is ${LIMIT_MB}MiB plus the peak of zram's pool" \
		"(mem_used_max), measured on the kernel side: the same total memory"
echo "# tierfs: size=${FS_MB}m ${MEM_OPT:-no mem= (from the cgroup limit) }($((MEM_MB * 100 / LIMIT_MB)) % of ${LIMIT_MB}MiB)" \
	"backend=$BACKEND compressor=lz4 swapsize=${FS_MB}m cache=auto $(transport_opts "$TRANSPORT");" \
	"daemon -f in the cgroup;" \
	"memory.memsw.limit_in_bytes = the limit (no kernel swap)"
echo "# check: fio verify=crc32c ${VERIFY_MB}MiB written first, read last; md5 of 3x${SAMPLE_MB}MiB" \
	"of the data, tierfs against the kernel"
echo "# other swap on the machine: ${other_swap:-none}; tierfs=$TIERFS"

# --- kernel: tmpfs swapping to zram, or to a swap file behind zswap --------

if [ "$KERNEL" = zram ]; then
	zram_on "$SWAP_BYTES"
else
	zswap_on "$SWAP_BYTES" "$SWAP_DIR" "$ZSWAP_PCT"
	echo "# zswap compressor: $ZSWAP_COMP"
	ZSWPWB0=$(vmstat_count zswpwb)
	PSWPOUT0=$(vmstat_count pswpout)
fi
CG=$(cg_new "$CG_BASE.kernel" "$LIMIT_MB") || die "cannot create memory cgroup $CG_BASE.kernel"
mount -t tmpfs -o size="${FS_MB}m" tierfs-bench "$TMPFS_MNT" || die "tmpfs mount failed"
run_side kernel "$TMPFS_MNT" kernel_stats
if [ "$KERNEL" = zram ]; then
	R[zram_after.kernel]=$(zram_mm_stat 3)
	R[zram_max.kernel]=$(zram_mm_stat 5)
else
	R[zram_max.kernel]=${R[poolmem.kernel]-}
fi
if [ "$SAME_TOTAL" = 1 ]; then
	zram_max=${R[zram_max.kernel]}
	TIERFS_LIMIT_MB=$((LIMIT_MB + (zram_max + 1048575) / 1048576))
	echo "# tierfs's cgroup limit: ${LIMIT_MB}MiB + zram's peak pool" \
		"$(((zram_max + 1048575) / 1048576))MiB = ${TIERFS_LIMIT_MB}MiB"
fi
rm -f "$TMPFS_MNT/data" "$TMPFS_MNT/verify"
umount "$TMPFS_MNT" || die "umount $TMPFS_MNT failed"
zram_off || die "cannot measure tierfs while /dev/$ZRAM is still a swap device"
zswap_off || die "cannot measure tierfs while $SWAPFILE is still a swap file"
rmdir "$CG" 2>/dev/null

# --- tierfs ---------------------------------------------------------------

CG=$(cg_new "$CG_BASE.tierfs" "$TIERFS_LIMIT_MB" noswap) || die "cannot create memory cgroup $CG_BASE.tierfs"
# Not through in_cg: a function run in the background is a subshell, and $!
# must be the daemon itself.
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$TIERFS" "$TIERFS_MNT" -f \
	-o "size=${FS_MB}m,${MEM_OPT}backend=$BACKEND,compressor=lz4,swapsize=${FS_MB}m,$(transport_opts "$TRANSPORT")" \
	2>>"$LOG" 9>&- &
DAEMON_PID=$!
wait_mounted "$TIERFS_MNT" "$DAEMON_PID" || die "tierfs did not mount $TIERFS_MNT: $(cat "$LOG")"
sampler &
SAMPLER_PID=$!
run_side tierfs "$TIERFS_MNT" tierfs_stats
kill "$SAMPLER_PID" 2>/dev/null
wait "$SAMPLER_PID" 2>/dev/null
SAMPLER_PID=
"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.end" 2>/dev/null
if kill -0 "$DAEMON_PID" 2>/dev/null; then
	fusermount3 -u "$TIERFS_MNT" 2>>"$LOG" || die "fusermount3 -u $TIERFS_MNT failed"
	wait "$DAEMON_PID"
	R[daemon_exit]=$?
else
	wait "$DAEMON_PID"
	R[daemon_exit]=$?
	fusermount3 -u "$TIERFS_MNT" 2>/dev/null || umount -l "$TIERFS_MNT"
fi
DAEMON_PID=
read -r "R[peak_resident]" "R[peak_pool]" "R[peak_rss]" "R[peak_cg]" "R[peak_backed]" \
	<<<"$(awk '{ for (i = 1; i <= 6; i++) if ($i > m[i]) m[i] = $i }
	END { printf "%.0f %.0f %.0f %.0f %.0f\n", m[1], m[2], m[3], m[4], m[6] }' "$SAMPLES")"
# Killed before the write ended: the last sample still gives pool per byte,
# once the pool holds enough (a zpool shard is 64 MiB) to mean something.
if [ -z "${R[stored.tierfs]-}" ]; then
	read -r "R[stored.tierfs]" "R[poolmem.tierfs]" <<<"$(awk '
		$5 >= 64 * 1048576 { s = $5; p = $2 } END { if (s) print s, p }' "$SAMPLES")"
	[ -n "${R[stored.tierfs]}" ] && R[sampled]=1
fi

# --- report ---------------------------------------------------------------

mib()
{
	awk -v b="$1" 'BEGIN { if (b == "") print "-"; else printf "%.1f MiB\n", b / 1048576 }'
}

# row LABEL UNIT KEY TARGET-OP TARGET: TARGET-OP is ">=" or "<=", on tierfs/kernel.
row()
{
	awk -v label="$1" -v unit="$2" -v a="${R[$3.kernel]-}" -v b="${R[$3.tierfs]-}" \
		-v op="$4" -v target="$5" 'BEGIN {
		ratio = "-"; goal = op " " target
		if (a != "" && b != "" && a > 0) {
			r = b / a; ratio = sprintf("%.2f", r)
			ok = (op == ">=") ? r >= target : r <= target
			goal = goal (ok ? " ok" : " MISSED")
		} else {
			goal = goal " not measured"
		}
		printf "%-36s | %14s | %14s | %5s | %s\n", label,
			a == "" ? "-" : a " " unit, b == "" ? "-" : b " " unit, ratio, goal
	}'
}

for side in kernel tierfs; do
	if [ -n "${R[stored.$side]-}" ] && [ "${R[stored.$side]}" -gt 0 ] 2>/dev/null; then
		R[perbyte.$side]=$(awk -v m="${R[poolmem.$side]}" -v s="${R[stored.$side]}" \
			'BEGIN { printf "%.3f\n", m / s }')
	fi
done

echo
printf '%-36s | %14s | %14s | %5s | %s\n' metric "$KLABEL" tierfs ratio "target (tierfs/kernel)"
row "seq write 1M fio (MiB/s)" "" write ">=" 1.00
row "seq read 1M dd, cache dropped" "" read ">=" 1.00
row "4K randread psync ${RUNTIME}s (IOPS)" "" randread ">=" 0.50
row "4K mmap x$NR_MMAP_JOBS uniform (IOPS)" "" mmap_uniform ">=" 0.50
row "4K mmap x$NR_MMAP_JOBS zipf:1.2 (IOPS)" "" mmap_zipf ">=" 0.50
row "pool memory per stored byte" "" perbyte "<=" 1.10
[ "$DRAIN" = 0 ] || row "drain, limits lifted (s)" "" drain "<=" 1.00
printf '%-36s | %14s | %14s |\n' "compression ratio (orig/compressed)" \
	"${R[ratio.kernel]:--}" "${R[ratio.tierfs]:--}"
printf '%-36s | %14s | %14s |\n' "  stored (orig_data_size|stored_bytes)" \
	"$(mib "${R[stored.kernel]-}")" "$(mib "${R[stored.tierfs]-}")${R[sampled]:+*}"
printf '%-36s | %14s | %14s |\n' "  pool (mem_used_total|pool_bytes)" \
	"$(mib "${R[poolmem.kernel]-}")" "$(mib "${R[poolmem.tierfs]-}")${R[sampled]:+*}"
if [ "$KERNEL" = zswap ] || [ -n "${R[filetier.tierfs]-}" ]; then
	printf '%-36s | %14s | %14s |\n' "  on the swap file (Used|last tier)" \
		"$(mib "${R[swapfile.kernel]-}")" "$(mib "${R[filetier.tierfs]-}")"
	printf '%-36s | %14s | %14s |\n' "  written back | straight to file" \
		"${R[writebacks.kernel]:--} | ${R[huge.kernel]:--}" \
		"${R[writebacks.tierfs]:--} | ${R[huge.tierfs]:--}"
fi
printf '%-36s | %14s | %14s |\n' "cgroup peak (max_usage_in_bytes)" \
	"$(mib "${R[peak.kernel]-}")" "$(mib "${R[peak.tierfs]-}")"
printf '%-36s | %14s | %14s |\n' "memory outside the cgroup" \
	"$(mib "${R[poolmem.kernel]-}")" \
	"$([ "${R[outside.tierfs]:-0}" != 0 ] && mib "${R[outside.tierfs]}" || echo "0 (in it)")"
printf '%-36s | %14s | %14s |\n' "cgroup failcnt (memory + memsw)" \
	"${R[failcnt.kernel]-}" "${R[failcnt.tierfs]-}"
printf '%-36s | %14s | %14s |\n' "oom-killed (oom_kill count)" \
	"${R[oom.kernel]} (${R[oom_kills.kernel]-})" "${R[oom.tierfs]} (${R[oom_kills.tierfs]-})"
printf '%-36s | %14s | %14s |\n' "verify crc32c ${VERIFY_MB}MiB" \
	"${R[verify.kernel]:-no}" "${R[verify.tierfs]:-no}"
printf '%-36s | %14s | %14s |\n' "md5 samples" "${R[md5.kernel]:--}" "${R[md5.tierfs]:--}"
printf '%-36s | %14s | %14s |\n' "time (s)" "${R[secs.kernel]}" "${R[secs.tierfs]}"
echo
echo "tierfs after the write: resident $(mib "${R[resident.tierfs]-}") of budget" \
	"$(mib "${R[budget.tierfs]-}"); peaks sampled every 0.2 s: resident" \
	"$(mib "${R[peak_resident]}"), page pool populated $(mib "${R[peak_backed]}")," \
	"pool $(mib "${R[peak_pool]}"), daemon RSS" \
	"$(mib "${R[peak_rss]}"), cgroup usage $(mib "${R[peak_cg]}"); daemon exit status ${R[daemon_exit]}"
[ "${R[transport]-}" != uring ] ||
	echo "tierfs transport uring: ${R[ring_requests]-} requests over the ring," \
		"${R[handoffs]-} of them handed to a worker"
[ -z "${R[sampled]-}" ] ||
	echo "* tierfs died during the write: the last 0.2 s sample of its counters before"
echo "the kernel's pool (zram's or zswap's) is not charged to a v1 cgroup; tierfs's pool is (it lives in the daemon)."

# --- results for bench/run -------------------------------------------------

# res LABEL UNIT KEY: tierfs against the kernel for R[KEY.*].
# res LABEL UNIT KEY [BETTER]
res()
{
	result "$1" "$2" "${R[$3.tierfs]-}" "$KLABEL" "${R[$3.kernel]-}" "${4-}"
}

mib_num()
{
	awk -v b="$1" 'BEGIN { if (b != "") printf "%.0f\n", b / 1048576 }'
}

if [ -n "$RESULTS" ]; then
	case "$BACKEND" in
	zpool) pool_label="pool memory per stored byte" ;;
	*) pool_label="backend bytes per stored byte (tierfs: on disk)" ;;
	esac
	res "seq write 1M fio" MiB/s write
	res "seq read 1M dd, cache dropped" MiB/s read
	res "4K randread psync" IOPS randread
	res "4K randread mmap x$NR_MMAP_JOBS, uniform" IOPS mmap_uniform
	res "4K randread mmap x$NR_MMAP_JOBS, zipf:1.2" IOPS mmap_zipf
	res "compression ratio (zram orig/compr_data_size, tierfs stored/pool)" x ratio higher
	res "$pool_label" B/B perbyte
	result "cgroup peak (max_usage_in_bytes)" MiB "$(mib_num "${R[peak.tierfs]-}")" \
		"$KLABEL" "$(mib_num "${R[peak.kernel]-}")"
	result "memory outside the cgroup (zram mem_used_max, zswap pool after the write)" MiB 0 \
		"$KLABEL" "$(mib_num "${R[zram_max.kernel]-}")"
	[ "$DRAIN" = 0 ] || result "drain (tierctl drain | swapoff), limits lifted" s \
		"${R[drain.tierfs]-}" "$KLABEL" "${R[drain.kernel]-}"
	# The time of a side that stopped early is not a time of the workload.
	if [ -z "${R[failed.kernel]-}" ] && [ -z "${R[failed.tierfs]-}" ]; then
		res "time of the whole workload" s secs
	fi
	param "cgroup v1 memory.limit_in_bytes" "${LIMIT_MB} MiB (kernel), ${TIERFS_LIMIT_MB} MiB (tierfs)"
	param data "${DATA_MB} MiB, fio buffer_compress_percentage=$COMPRESS refill_buffers randseed=1"
	param "tierfs" "${MEM_OPT:-no mem= (from the cgroup limit), }backend=$BACKEND compressor=lz4 swapsize=${FS_MB}m cache=auto $(transport_opts "$TRANSPORT"), memsw limit = limit"
	if [ "$KERNEL" = zram ]; then
		param "kernel" "tmpfs + zram lz4 disksize=${FS_MB}MiB, swappiness=100"
	else
		param "kernel" "tmpfs + zswap $ZSWAP_COMP max_pool_percent=$ZSWAP_PCT + swap file ${FS_MB}MiB in $SWAP_DIR, swappiness=100"
	fi
	param "random reads" "bs=4k ${RUNTIME}s each; mmap: $NR_MMAP_JOBS jobs, ${MMAP_JOB_MB} MiB region each"
	for side in kernel tierfs; do
		[ -z "${R[failed.$side]-}" ] ||
			note "$side: step '${R[failed.$side]}' failed (oom-killed: ${R[oom.$side]});" \
				"the rows after it are not measured"
	done
	note "verify crc32c ${VERIFY_MB}MiB: kernel ${R[verify.kernel]:-no}, tierfs ${R[verify.tierfs]:-no};" \
		"md5 samples: kernel ${R[md5.kernel]:--}, tierfs ${R[md5.tierfs]:--}"
	note "the kernel's pool (zram's or zswap's) is not charged to a v1 cgroup; tierfs's pool is (it lives in the daemon)."
fi

status=0
oom_only=1
for side in kernel tierfs; do
	if [ -n "${R[failed.$side]-}" ]; then
		echo "pressure.sh: $side: step '${R[failed.$side]}' could not run" \
			"(oom-killed: ${R[oom.$side]}); see the log below" >&2
		status=1
		[ "${R[oom.$side]}" = yes ] || oom_only=0
	fi
done
if [ -n "${R[md5.kernel]-}" ] && [ -n "${R[md5.tierfs]-}" ] &&
	[ "${R[md5.kernel]}" != "${R[md5.tierfs]}" ]; then
	echo "pressure.sh: tierfs read back other data than the kernel tmpfs" >&2
	status=1
	oom_only=0
fi
# Killed for memory and nothing else wrong: that is what the limit did, a
# result rather than a broken run.
if [ "$status" -ne 0 ] && [ "$oom_only" = 1 ]; then
	for side in kernel tierfs; do
		[ -z "${R[failed.$side]-}" ] ||
			outcome "$side: OOM-killed in the cgroup during step '${R[failed.$side]}'"
	done
fi
if [ "$status" -ne 0 ] && [ -s "$LOG" ]; then
	tail -n 20 "$LOG" >&2
fi
exit "$status"
