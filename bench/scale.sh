#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How does cost grow with work?  For each backend (zpool, ramdisk, file and
# the chain zpool+file) fio writes 1, 4, 16 and 64 times the resident budget
# (mem=) into one file; dd reads its oldest part back with the page cache
# dropped, fio reads 4 KiB at random over all of it; then the daemon's memory
# beyond its resident pages and its RAM pool is divided by the pages it has
# swapped: what a swapped page costs in page map, slot map and pool index.
# The anchor is a kernel tmpfs in a memory cgroup of the same budget,
# swapping to a swap file of the same size on the same disk, at every size.
# At the size given by --writers-factor, 1 writer is set against 2 writers
# (two files of half the size each).
#
# The workload runs in a memory cgroup of --cache-mb (the kernel side: the
# budget plus that), so the kernel's page cache of the FUSE file cannot
# serve the reads; tierfs's daemon runs outside it with mem= the budget.
# The RAM backends stop at --ram-max-factor (their pool lives in the
# machine's RAM), the others at the largest factor that fits --swap-dir.
#
# Exit status: 0 done, 1 a step could not run, 2 usage, 77 skipped (not
# root, no /dev/fuse, no cgroup v1 memory controller, no fio, no jq).

# Functions run through traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: scale.sh [--tierfs PATH] [--tierctl PATH] [--mem-mb N] [--factors "1 4 16 64"]
                [--backends "zpool ramdisk file zpool+file"] [--ram-max-factor N]
                [--writers-factor N] [--read-mb N] [--runtime S] [--cache-mb N]
                [--swap-dir DIR] [--compress PCT] [--quick] [--results FILE]

  --mem-mb N          the resident budget: tierfs mem=, the kernel cgroup's limit (512)
  --factors LIST      data written, in multiples of the budget ("1 4 16 64")
  --backends LIST     tierfs backends (zpool ramdisk file zpool+file); file
                      and the chain's file go to --swap-dir
  --ram-max-factor N  the largest factor for zpool and ramdisk (16)
  --writers-factor N  the factor at which 1 and 2 writers are compared (4; 0: none)
  --read-mb N         dd reads at most the first N MiB of the data (2048)
  --runtime S         seconds of the 4 KiB random read (10)
  --cache-mb N        the workload's cgroup, for the kernel's page cache (256)
  --swap-dir DIR      swap files, tierfs's and the kernel's (/var/tmp)
  --compress PCT      fio --buffer_compress_percentage (50)
  --quick             --mem-mb 64 --factors "1 4" --writers-factor 4
                      --read-mb 128 --runtime 3
  --results FILE      append TSV records for bench/run (see bench/run)

Must run as root: it mounts, makes memory cgroups and a swap file.
EOF
}

TIERFS=
TIERCTL=
MEM_MB=512
FACTORS="1 4 16 64"
BACKENDS="zpool ramdisk file zpool+file"
RAM_MAX_FACTOR=16
WRITERS_FACTOR=4
READ_MB=2048
RUNTIME=10
CACHE_MB=256
SWAP_DIR=/var/tmp
COMPRESS=50
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--factors) FACTORS=${2-}; shift ;;
	--backends) BACKENDS=${2-}; shift ;;
	--ram-max-factor) RAM_MAX_FACTOR=${2-}; shift ;;
	--writers-factor) WRITERS_FACTOR=${2-}; shift ;;
	--read-mb) READ_MB=${2-}; shift ;;
	--runtime) RUNTIME=${2-}; shift ;;
	--cache-mb) CACHE_MB=${2-}; shift ;;
	--swap-dir) SWAP_DIR=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--results) RESULTS=${2-}; shift ;;
	--quick) MEM_MB=64; FACTORS="1 4"; WRITERS_FACTOR=4; READ_MB=128; RUNTIME=3 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "scale.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=scale.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
# shellcheck disable=SC2086 # the lists are words
want_positive "$MEM_MB" $FACTORS "$RAM_MAX_FACTOR" "$READ_MB" "$RUNTIME" "$CACHE_MB"
want_percent --compress "$COMPRESS"
case "$WRITERS_FACTOR" in
''|*[!0-9]*) echo "$NAME: --writers-factor wants a number" >&2; exit 2 ;;
esac
[ -d "$SWAP_DIR" ] || { echo "$NAME: --swap-dir $SWAP_DIR is not a directory" >&2; exit 2; }
[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }

require_mount_bench fio fusermount3 mkswap swapon swapoff findmnt jq flock
require_memcg_v1
find_tierfs
find_tierctl
for b in $BACKENDS; do
	require_backend "$b"
done
# Swap benchmarks take turns: the kernel side must swap to its own file only.
zram_lock 3000

WORK=$(mktemp -d /tmp/tierfs-scale.XXXXXX) || die "mktemp failed"
MNT=$WORK/mnt
LOG=$WORK/log
CG_BASE=$CG_ROOT/tierfs-bench-scale.$$
CG=
DAEMON_PID=
KSWAP=
TSWAP=$SWAP_DIR/tierfs-bench-scale.$$.swap

cleanup()
{
	unmount_daemon "$MNT" "$DAEMON_PID"
	if is_mounted "$MNT"; then
		umount "$MNT" || umount -l "$MNT"
	fi
	kswap_off
	rm -f "$TSWAP"
	cg_remove "$CG_BASE"
	[ -s "$LOG" ] && { echo "$NAME: last lines of the log:"; tail -n 5 "$LOG"; } >&2
	rm -f "$LOG"
	cd / && rmdir "$MNT" "$WORK" 2>/dev/null
}
enter_work "$MNT"

kswap_on()
{
	KSWAP=$SWAP_DIR/tierfs-bench-scale.$$.kswap
	fallocate -l "$1" "$KSWAP" || die "cannot create $KSWAP"
	chmod 600 "$KSWAP"
	mkswap "$KSWAP" >>"$LOG" 2>&1 || die "mkswap $KSWAP failed"
	swapon -p 32767 "$KSWAP" 2>>"$LOG" || die "swapon $KSWAP failed"
}

kswap_off()
{
	[ -n "$KSWAP" ] || return 0
	if grep -q "^$KSWAP " /proc/swaps && ! swapoff "$KSWAP" 2>>"$LOG"; then
		echo "$NAME: swapoff $KSWAP failed; it is still a swap file" >&2
		return 1
	fi
	rm -f "$KSWAP"
	KSWAP=
}

# The disk the swap files go to, in MiB free now.
free_mb()
{
	df -Pm "$SWAP_DIR" | awk 'NR == 2 { print $4 }'
}

mib_per_s()
{
	awk -v mb="$1" -v ns="$2" 'BEGIN { printf "%.0f\n", mb / (ns / 1e9) }'
}

# write_data MB WRITERS: WRITERS fio jobs at once, each writing MB/WRITERS
# into its own file data.N; MiB/s from the wall time, end_fsync included.
write_data()
{
	local start end

	start=$(now_ns)
	# shellcheck disable=SC2016 # fio expands $jobnum
	in_cg "$CG" fio --name=w --directory="$MNT" --filename_format='data.$jobnum' \
		--rw=write --bs=1M --size="$(($1 / $2))m" --numjobs="$2" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed=1 \
		--ioengine=psync --end_fsync=1 --fallocate=none --minimal >/dev/null 2>>"$LOG" ||
		return 1
	end=$(now_ns)
	mib_per_s "$1" $((end - start))
}

# read_data MB: the first MB MiB of data.0, its page cache dropped first
# (tmpfs keeps its pages: there, the cache is the only copy).
read_data()
{
	local start end

	in_cg "$CG" dd if="$MNT/data.0" iflag=nocache count=0 status=none 2>>"$LOG"
	start=$(now_ns)
	in_cg "$CG" dd if="$MNT/data.0" of=/dev/null bs=1M count="$1" status=none 2>>"$LOG" ||
		return 1
	end=$(now_ns)
	mib_per_s "$1" $((end - start))
}

# rand_read MB: IOPS of 4 KiB psync reads at random over data.0's MB MiB.
rand_read()
{
	local out

	out=$(in_cg "$CG" fio --name=r --filename="$MNT/data.0" --rw=randread --bs=4k \
		--size="$1m" --ioengine=psync --invalidate=0 --runtime="$RUNTIME" --time_based \
		--randseed=1 --minimal 2>>"$LOG") || return 1
	printf '%s\n' "$out" | awk -F';' '
		$1 == "3" { if ($5 != 0) exit 1; printf "%.0f\n", $8; found = 1 }
		END { exit !found }'
}

# The run of one side at one size: sets W (MiB/s), R (MiB/s), IOPS, and for
# tierfs STORED (pages swapped) and OTHER (daemon bytes beyond its resident
# pages and its RAM pool).
declare -A V

# kernel_side MB WRITERS READS: READS 0 writes only
kernel_side()
{
	local mb=$1 nw=$2 reads=$3

	CG=$(cg_new "$CG_BASE" $((MEM_MB + CACHE_MB))) || die "cannot create memory cgroup $CG_BASE"
	kswap_on "$((mb + 256))m"
	mount -t tmpfs -o size="$((mb + 256))m" tierfs-bench-scale "$MNT" || die "tmpfs mount failed"
	W=$(write_data "$mb" "$nw") || die "kernel: fio write of $mb MiB failed"
	if [ "$reads" = 1 ]; then
		R=$(read_data "$(min "$mb" "$READ_MB")") || die "kernel: dd read failed"
		IOPS=$(rand_read "$mb") || die "kernel: fio randread failed"
		SWAPPED=$(awk '$1 == "SwapTotal:" { t = $2 } $1 == "SwapFree:" { f = $2 }
			END { printf "%.0f\n", (t - f) * 1024 }' /proc/meminfo)
	fi
	umount "$MNT" || die "umount $MNT failed"
	kswap_off || die "cannot swapoff $KSWAP"
	cg_remove "$CG_BASE"
}

min()
{
	echo $(($1 < $2 ? $1 : $2))
}

# tierfs_side BACKEND MB WRITERS READS
tierfs_side()
{
	local backend=$1 mb=$2 nw=$3 reads=$4 json=$WORK/stats opts rss backed ram_pool

	rm -f "$TSWAP"
	opts="size=$((mb + 256))m,mem=${MEM_MB}m,swapsize=$((mb + 256))m,compressor=lz4"
	case "$backend" in
	zpool|ramdisk) opts="$opts,backend=$backend" ;;
	file) opts="$opts,backend=file:$TSWAP" ;;
	*+file) opts="$opts,backend=$backend:$TSWAP,pool_max=$((MEM_MB / 4))m" ;;
	esac
	CG=$(cg_new "$CG_BASE" "$CACHE_MB" noswap) || die "cannot create memory cgroup $CG_BASE"
	"$TIERFS" "$MNT" -f -o "$opts" 2>>"$LOG" 9>&- &
	DAEMON_PID=$!
	wait_mounted "$MNT" "$DAEMON_PID" || die_daemon "tierfs did not mount $MNT ($opts)" "$DAEMON_PID" "$LOG"
	W=$(write_data "$mb" "$nw") || die_daemon "$backend: fio write of $mb MiB failed" "$DAEMON_PID" "$LOG"
	if [ "$reads" = 1 ]; then
		R=$(read_data "$(min "$mb" "$READ_MB")") || die_daemon "$backend: dd read failed" "$DAEMON_PID" "$LOG"
		IOPS=$(rand_read "$mb") || die_daemon "$backend: fio randread failed" "$DAEMON_PID" "$LOG"
		# The chain's writeback settles first: its RAM tier back under its bound.
		sleep 1
		"$TIERCTL" stats "$MNT" --json >"$json" 2>>"$LOG" || die_daemon "tierctl stats failed" "$DAEMON_PID" "$LOG"
		rss=$(awk '/^VmRSS:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$DAEMON_PID/status")
		backed=$(jq '.pool.backed_bytes' "$json")
		# The RAM tier's pool: the backend's own, or the chain's first tier.
		ram_pool=$(jq 'if .backend.tiers then .backend.tiers[0].pool_bytes
			elif .backend.name == "file" then 0 else .backend.pool_bytes end' "$json")
		STORED=$(jq '.backend.stored_pages' "$json")
		OTHER=$((rss - backed - ram_pool))
		META=$(jq '.backend.meta_bytes' "$json")
		V[$backend.$mb.ratio]=$(jq '.backend.compression_ratio // 0' "$json")
		echo "# $backend $mb MiB: rss $rss backed $backed ram_pool $ram_pool" \
			"stored_pages $STORED meta $META" >>"$WORK/detail"
	fi
	unmount_daemon "$MNT" "$DAEMON_PID" || die "$backend: the daemon exited with an error: $(tail -n 3 "$LOG")"
	DAEMON_PID=
	rm -f "$TSWAP"
	cg_remove "$CG_BASE"
}

: >"$WORK/detail"
echo "# scale.sh: budget mem=${MEM_MB}m; factors $FACTORS; data fio bs=1M psync" \
	"buffer_compress_percentage=$COMPRESS; read: dd bs=1M of the first min(data, $READ_MB MiB)," \
	"cache dropped; randread fio 4k psync ${RUNTIME}s over all of it"
echo "# the workload in a memory cgroup of ${CACHE_MB} MiB (the kernel side: $((MEM_MB + CACHE_MB)) MiB," \
	"tmpfs swapping to a swap file in $SWAP_DIR)"
echo "# per page: daemon VmRSS - page pool backed - RAM tier pool_bytes, over backend stored_pages"
printf '%-11s %6s %8s %8s %8s %9s %9s %7s\n' side data_mb write read randread swapped B/page marg
param budget "mem=${MEM_MB}m (kernel: a v1 memory cgroup of $((MEM_MB + CACHE_MB)) MiB with the workload)"
param factors "$FACTORS"
param data "fio bs=1M psync buffer_compress_percentage=$COMPRESS refill_buffers"
param read "dd bs=1M, the first min(data, $READ_MB MiB), page cache dropped; fio randread 4k psync ${RUNTIME}s"
param swap "$SWAP_DIR ($(df -PT "$SWAP_DIR" | awk 'NR == 2 { print $2 }'))"
plot write lines "seq write 1M against data written" "data written, x budget" "MiB/s"
plot read lines "seq read 1M, cache dropped, against data written" "data written, x budget" "MiB/s"
plot randread loglines "4K random read against data written" "data written, x budget" "IOPS"
plot bytes_per_page lines "daemon memory per swapped page" "data written, x budget" "bytes"

declare -A LAST_OTHER LAST_STORED
for f in $FACTORS; do
	mb=$((MEM_MB * f))
	need=$((mb + 256 + 1024))
	if [ "$(free_mb)" -lt "$need" ]; then
		note "${f}x (${mb} MiB) not measured: $SWAP_DIR has $(free_mb) MiB free, a swap file needs $need"
		echo "# ${f}x skipped: $SWAP_DIR has $(free_mb) MiB free" >&2
		continue
	fi
	echo "scale.sh: ${f}x, kernel ..." >&2
	kernel_side "$mb" 1 1
	V[kernel.$f.w]=$W
	V[kernel.$f.r]=$R
	V[kernel.$f.iops]=$IOPS
	printf '%-11s %6s %8s %8s %8s %9s %9s %7s\n' tmpfs+swap "$mb" "$W" "$R" "$IOPS" \
		$((SWAPPED / 4096)) - -
	point write "tmpfs+swap file" "${f}x" "$W"
	point read "tmpfs+swap file" "${f}x" "$R"
	point randread "tmpfs+swap file" "${f}x" "$IOPS"
	point bytes_per_page "kernel (xarray entry + swap_map byte)" "${f}x" 9
	for b in $BACKENDS; do
		case "$b" in
		zpool|ramdisk) [ "$f" -le "$RAM_MAX_FACTOR" ] || continue ;;
		esac
		echo "scale.sh: ${f}x, $b ..." >&2
		tierfs_side "$b" "$mb" 1 1
		per=- marg=-
		[ "$STORED" -gt 0 ] && per=$((OTHER / STORED))
		if [ -n "${LAST_STORED[$b]-}" ] && [ "$STORED" -gt "${LAST_STORED[$b]}" ]; then
			marg=$(((OTHER - LAST_OTHER[$b]) / (STORED - LAST_STORED[$b])))
		fi
		LAST_OTHER[$b]=$OTHER
		LAST_STORED[$b]=$STORED
		printf '%-11s %6s %8s %8s %8s %9s %9s %7s\n' "$b" "$mb" "$W" "$R" "$IOPS" "$STORED" \
			"$per" "$marg"
		result "${f}x: seq write 1M, $b" MiB/s "$W" "tmpfs+swap file" "${V[kernel.$f.w]}"
		result "${f}x: seq read 1M, $b" MiB/s "$R" "tmpfs+swap file" "${V[kernel.$f.r]}"
		result "${f}x: 4K randread, $b" IOPS "$IOPS" "tmpfs+swap file" "${V[kernel.$f.iops]}"
		[ "$per" = - ] ||
			result "${f}x: daemon bytes per swapped page, $b" B "$per" "kernel model" 9
		[ "$marg" = - ] ||
			result "${f}x: the same, marginal over the last size, $b" B "$marg" "kernel model" 9
		point write "$b" "${f}x" "$W"
		point read "$b" "${f}x" "$R"
		point randread "$b" "${f}x" "$IOPS"
		[ "$per" = - ] || point bytes_per_page "$b" "${f}x" "$per"
	done
done

if [ "$WRITERS_FACTOR" -gt 0 ]; then
	mb=$((MEM_MB * WRITERS_FACTOR))
	echo "# 1 against 2 writers at ${WRITERS_FACTOR}x ($mb MiB in all; 2: two files of half)"
	printf '%-11s %8s %8s %7s\n' side 1_writer 2_writers ratio
	plot writers bars "seq write at ${WRITERS_FACTOR}x: 1 and 2 writers" "side" "MiB/s"
	sides=kernel
	for b in $BACKENDS; do
		case "$b" in
		zpool|ramdisk) [ "$WRITERS_FACTOR" -le "$RAM_MAX_FACTOR" ] || continue ;;
		esac
		sides="$sides $b"
	done
	for s in $sides; do
		echo "scale.sh: ${WRITERS_FACTOR}x, 1 and 2 writers, $s ..." >&2
		if [ "$s" = kernel ]; then
			kernel_side "$mb" 1 0; w1=$W
			kernel_side "$mb" 2 0; w2=$W
			s="tmpfs+swap file"
		else
			tierfs_side "$s" "$mb" 1 0; w1=$W
			tierfs_side "$s" "$mb" 2 0; w2=$W
		fi
		printf '%-11s %8s %8s %7s\n' "$s" "$w1" "$w2" \
			"$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.2f", a / b }')"
		result "${WRITERS_FACTOR}x: seq write, 2 writers, $s" MiB/s "$w2" "1 writer" "$w1"
		point writers "1 writer" "$s" "$w1"
		point writers "2 writers" "$s" "$w2"
	done
fi
cat "$WORK/detail"
rm -f "$WORK/detail" "$WORK/stats"
note "Bytes per swapped page: the daemon's VmRSS less its page pool's backed pages and its RAM tier's pool_bytes," \
	"over the pages its backend holds; marginal: the growth of that memory over the growth of the pages" \
	"since the last size. The kernel's 9 bytes are its model (an 8-byte entry in the file's xarray and a" \
	"swap_map byte), not a measurement."
exit 0
