#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Readahead on swap-in: how fast is evicted data read back under each
# readahead= policy, on each backend?  For every backend (zpool, ramdisk, a
# swap file) and policy (direct, cluster, vma, auto) a fresh mount with
# mem= and cache=never (every read reaches the daemon) gets one file of
# half-compressible data; before each read everything is evicted (tierctl
# reclaim all), then read back: dd bs=4k, dd bs=1M, and fio 4 KiB random
# psync reads over a fixed io_size.  Prints time, throughput, the ratio
# against direct (the anchor: it loads only what the read needs) and the
# readahead counters; --results FILE also writes them for bench/run.
#
# Exit status: 0 done (nothing is enforced), 1 a step failed or data read
# back differs, 2 usage, 77 skipped (not root, /dev/fuse unusable, no fio).

# Functions run from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: readahead.sh [--tierfs PATH] [--tierctl PATH] [--size-mb N] [--io-mb N]
                    [--mem-mb N] [--backends LIST] [--policies LIST]
                    [--swap-dir DIR] [--repeat N] [--compress PCT] [--quick]
                    [--results FILE]

  --tierfs PATH    tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH   tierctl binary (default: next to tierfs, else tierctl in PATH)
  --size-mb N      the file written and read back, MiB (512)
  --io-mb N        fio's io_size for the 4 KiB random reads, MiB (64)
  --mem-mb N       tierfs mem= in MiB (64)
  --backends LIST  comma-separated, of zpool, ramdisk, file (all three); one
                   that tierfs has not built in is left out, with a note
  --policies LIST  comma-separated, of direct, cluster, vma, auto (all four);
                   direct is the anchor and always runs first
  --swap-dir DIR   where the file backend's swap file goes (/var/tmp)
  --repeat N       runs of each read; the median is reported, with the range (3)
  --compress PCT   fio --buffer_compress_percentage of the data (50)
  --quick          --size-mb 64 --io-mb 16 --repeat 1 (smoke test)
  --results FILE   append TSV records for bench/run (see bench/run)

Must run as root (it mounts).  Swap devices already on the machine are left
alone; nothing here uses kernel swap.
EOF
}

TIERFS=
TIERCTL=
SIZE_MB=512
IO_MB=64
MEM_MB=64
BACKENDS=zpool,ramdisk,file
POLICIES=direct,cluster,vma,auto
SWAP_DIR=/var/tmp
REPEAT=3
COMPRESS=50
QUICK=0
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--size-mb) SIZE_MB=${2-}; shift ;;
	--io-mb) IO_MB=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--backends) BACKENDS=${2-}; shift ;;
	--policies) POLICIES=${2-}; shift ;;
	--swap-dir) SWAP_DIR=${2-}; shift ;;
	--repeat) REPEAT=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--quick) QUICK=1; SIZE_MB=64; IO_MB=16; REPEAT=1 ;;
	--results) RESULTS=${2-}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "readahead.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=readahead.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$SIZE_MB" "$IO_MB" "$MEM_MB" "$REPEAT"
[ "$IO_MB" -le "$SIZE_MB" ] || { echo "readahead.sh: --io-mb exceeds --size-mb" >&2; exit 2; }
want_percent --compress "$COMPRESS"
IFS=, read -r -a BACKEND_LIST <<<"$BACKENDS"
IFS=, read -r -a POLICY_LIST <<<"$POLICIES"
[ "${#BACKEND_LIST[@]}" -gt 0 ] || { echo "readahead.sh: --backends is empty" >&2; exit 2; }
for b in "${BACKEND_LIST[@]}"; do
	case "$b" in
	zpool|ramdisk|file) ;;
	*) echo "readahead.sh: unknown backend '$b'" >&2; exit 2 ;;
	esac
done
# direct is the anchor: measured first, whether asked for or not.
policies=(direct)
for p in "${POLICY_LIST[@]}"; do
	case "$p" in
	direct) ;;
	cluster|vma|auto) policies+=("$p") ;;
	*) echo "readahead.sh: unknown policy '$p'" >&2; exit 2 ;;
	esac
done
POLICY_LIST=("${policies[@]}")
[ -d "$SWAP_DIR" ] || { echo "readahead.sh: --swap-dir $SWAP_DIR is not a directory" >&2; exit 2; }

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio dd fusermount3 findmnt md5sum
find_tierfs
find_tierctl
only_built_backends

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SWAP_DIR=$(cd "$SWAP_DIR" && pwd)
# Room for the file and slack, in the mount and in the backend.
FS_MB=$((SIZE_MB + 64))

WORK=$(mktemp -d /tmp/tierfs-readahead.XXXXXX) || die "mktemp failed"
MNT=$WORK/mnt
LOG=$WORK/log
# The file backend's swap file is unnamed (O_TMPFILE) in this path's directory.
SWAP_PATH=$SWAP_DIR/tierfs-readahead.$$.swap
DAEMON_PID=

tierfs_failed() { die_daemon "$1" "$DAEMON_PID" "$LOG"; }

unmount()
{
	unmount_daemon "$MNT" "$DAEMON_PID"
	DAEMON_PID=
}

cleanup()
{
	unmount
	rm -f "$SWAP_PATH" "$LOG" "$WORK"/stats.*
	cd / && rmdir "$MNT" "$WORK" 2>/dev/null
}
enter_work "$MNT"

# stats NAME: tierctl stats --json into stats.NAME.
stats()
{
	"$TIERCTL" stats "$MNT" --json >"$WORK/stats.$1" 2>>"$LOG"
}

# json_str KEY FILE: the first string stored under "KEY".
json_str()
{
	grep -o "\"$1\":\"[^\"]*\"" "$2" | head -n 1 | cut -d'"' -f4
}

# delta KEY: KEY's growth from stats.before to stats.after.
delta()
{
	echo $(($(json_num "$1" "$WORK/stats.after") - $(json_num "$1" "$WORK/stats.before")))
}

# evict_all: every resident page of the mount to the backend; fails when
# more than 1 MiB stays resident.  One "reclaim all" can stop early: a batch
# that only promotes pages in use (just read back) frees nothing and ends
# it, while the next call finds them aged; so it is repeated, up to 64 times,
# and the calls beyond the first are counted in NR_EXTRA_RECLAIMS.
NR_EXTRA_RECLAIMS=0
evict_all()
{
	local resident

	for _ in $(seq 64); do
		"$TIERCTL" reclaim "$MNT" all >>"$LOG" 2>&1 || return 1
		stats evicted || return 1
		resident=$(json_num resident_bytes "$WORK/stats.evicted")
		[ "${resident:-0}" -gt 1048576 ] || return 0
		NR_EXTRA_RECLAIMS=$((NR_EXTRA_RECLAIMS + 1))
	done
	echo "$NAME: 64 x reclaim all left $resident bytes resident" >>"$LOG"
	return 1
}

# read_dd BS: dd of the whole file with BS; prints seconds and MiB/s.
read_dd()
{
	local start end

	start=$(now_ns)
	dd if="$MNT/data" of=/dev/null bs="$1" status=none 2>>"$LOG" || return 1
	end=$(now_ns)
	awk -v ns=$((end - start)) -v mb="$SIZE_MB" \
		'BEGIN { printf "%.3f %.1f\n", ns / 1e9, mb / (ns / 1e9) }'
}

# read_rand: fio 4 KiB random reads, psync, IO_MB in all; prints seconds
# (fio's read runtime) and IOPS (terse v3: error field 5, IOPS 8, runtime 9).
read_rand()
{
	local out

	out=$(fio --name=r --filename="$MNT/data" --rw=randread --bs=4k --size="${SIZE_MB}m" \
		--io_size="${IO_MB}m" --ioengine=psync --invalidate=0 --randseed=1 --minimal \
		2>>"$LOG") || return 1
	printf '%s\n' "$out" | awk -F';' '
		$1 == "3" { if ($5 != 0) exit 1; printf "%.3f %.0f\n", $9 / 1000, $8; found = 1 }
		END { exit !found }'
}

TESTS=(dd4k dd1m rand)
declare -A TEST_LABEL=(
	[dd4k]="seq re-read dd bs=4k"
	[dd1m]="seq re-read dd bs=1M"
	[rand]="4K randread psync ${IO_MB}MiB"
)
declare -A TEST_UNIT=([dd4k]=MiB/s [dd1m]=MiB/s [rand]=IOPS)
declare -A R
MD5_FIRST=

# measure BACKEND POLICY: one mount, the file written once, each test after
# an eviction of everything; results in R[BACKEND.POLICY.*].
measure()
{
	local b=$1 p=$2 k=$1.$2 backend_opt=$1 t out md5

	[ "$b" = file ] && backend_opt=file:$SWAP_PATH
	echo "$NAME: $b $p: mount, write ${SIZE_MB}MiB" >&2
	"$TIERFS" "$MNT" -f -o "size=${FS_MB}m,mem=${MEM_MB}m,cache=never,backend=$backend_opt,compressor=lz4,swapsize=${FS_MB}m,readahead=$p" \
		2>>"$LOG" &
	DAEMON_PID=$!
	wait_mounted "$MNT" "$DAEMON_PID" || tierfs_failed "$b $p: tierfs did not mount"
	fio --name=w --filename="$MNT/data" --rw=write --bs=1M --size="${SIZE_MB}m" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed=1 \
		--ioengine=psync --fallocate=none --minimal >/dev/null 2>>"$LOG" ||
		tierfs_failed "$b $p: writing the file failed"
	# The tests take turns, so that a slow spell of the machine spreads over all.
	for rep in $(seq "$REPEAT"); do
		for t in "${TESTS[@]}"; do
			echo "$NAME: $b $p: ${TEST_LABEL[$t]} ($rep/$REPEAT)" >&2
			evict_all || tierfs_failed "$b $p: tierctl reclaim all failed"
			stats before || tierfs_failed "$b $p: tierctl stats failed"
			case "$t" in
			dd4k) out=$(read_dd 4k) ;;
			dd1m) out=$(read_dd 1M) ;;
			rand) out=$(read_rand) ;;
			esac || tierfs_failed "$b $p: ${TEST_LABEL[$t]} failed"
			stats after || tierfs_failed "$b $p: tierctl stats failed"
			R[$k.$t.runs]+="${R[$k.$t.runs]:+,}$out"
			[ "$rep" = 1 ] || continue
			R[$k.$t.hits]=$(delta hits)
			R[$k.$t.misses]=$(delta misses)
			R[$k.$t.ahead]=$(delta pages_read_ahead)
			R[$k.$t.swapins]=$(delta swapins)
			R[$k.$t.loads]=$(delta loads)
		done
	done
	# The median run (the lower middle one of an even number) by throughput,
	# and the range of throughputs.
	for t in "${TESTS[@]}"; do
		read -r "R[$k.$t.secs]" "R[$k.$t.speed]" "R[$k.$t.range]" <<<"$(
			tr ',' '\n' <<<"${R[$k.$t.runs]}" | sort -g -k2,2 | awk '
				{ s[NR] = $1; v[NR] = $2 }
				END { m = int((NR + 1) / 2); print s[m], v[m], v[1] "-" v[NR] }')"
	done
	R[$k.policy]=$(json_str policy "$WORK/stats.after")
	R[$k.ratio]=$(json_num compression_ratio "$WORK/stats.after")
	# Read back through swap-in once more: the same bytes on every mount.
	evict_all || tierfs_failed "$b $p: tierctl reclaim all failed"
	md5=$(dd if="$MNT/data" bs=1M status=none 2>>"$LOG" | md5sum | cut -c1-12)
	[ "${PIPESTATUS[0]}" -eq 0 ] || tierfs_failed "$b $p: reading the file for md5 failed"
	R[$k.md5]=$md5
	[ -n "$MD5_FIRST" ] || MD5_FIRST=$md5
	unmount
	[ "$md5" = "$MD5_FIRST" ] ||
		die "$b $p: read back other data (md5 $md5, the first mount $MD5_FIRST)"
}

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
other_swap=$(awk 'NR > 1 { printf "%s%s", sep, $1; sep = "," }' /proc/swaps)
echo "# tierfs readahead benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, commit $commit; quick=$QUICK"
echo "# each backend x policy: a fresh mount size=${FS_MB}m mem=${MEM_MB}m cache=never" \
	"compressor=lz4 swapsize=${FS_MB}m readahead=<policy>; file backend: swap file in $SWAP_DIR"
echo "# data: ${SIZE_MB}MiB, fio write bs=1M psync buffer_compress_percentage=$COMPRESS" \
	"refill_buffers randseed=1"
echo "# before each read: tierctl reclaim all; reads: dd bs=4k and bs=1M of the whole file" \
	"(MiB/s = size / wall time), fio randread bs=4k psync io_size=${IO_MB}m randseed=1 (IOPS);" \
	"$REPEAT runs of each, taking turns: the median run and the range"
echo "# counters (of the first run): deltas over the read of readahead hits, misses," \
	"pages_read_ahead, reclaim swapins and backend loads (pages read from the backend)"
echo "# other swap on the machine: ${other_swap:-none}; tierfs=$TIERFS"

START=$(now_ns)
for b in "${BACKEND_LIST[@]}"; do
	for p in "${POLICY_LIST[@]}"; do
		measure "$b" "$p"
	done
done
TOTAL_SECS=$(( ($(now_ns) - START) / 1000000000 ))

# --- report -------------------------------------------------------------------

# ratio KEY TEST: throughput of KEY against direct on the same backend.
ratio()
{
	awk -v a="${R[${1%%.*}.direct.$2.speed]}" -v b="${R[$1.$2.speed]}" \
		'BEGIN { if (a > 0) printf "%.2f\n", b / a; else print "-" }'
}

policy_label()
{
	if [ "$2" = auto ]; then
		echo "auto=${R[$1.auto.policy]}"
	else
		echo "$2"
	fi
}

echo
printf '%-8s %-12s %-22s %7s %8s %13s %7s %7s %6s %7s %7s %7s\n' backend policy test "time s" \
	"MiB/s|IO" "range" "/direct" hits misses "ahead" swapins loads
for b in "${BACKEND_LIST[@]}"; do
	for p in "${POLICY_LIST[@]}"; do
		k=$b.$p
		for t in "${TESTS[@]}"; do
			printf '%-8s %-12s %-22s %7s %8s %13s %7s %7s %6s %7s %7s %7s\n' "$b" \
				"$(policy_label "$b" "$p")" "${TEST_LABEL[$t]}" "${R[$k.$t.secs]}" \
				"${R[$k.$t.speed]}" "${R[$k.$t.range]}" "$(ratio "$k" "$t")" "${R[$k.$t.hits]}" \
				"${R[$k.$t.misses]}" "${R[$k.$t.ahead]}" "${R[$k.$t.swapins]}" \
				"${R[$k.$t.loads]}"
		done
	done
done
echo
echo "MiB/s|IO: MiB/s of dd, IOPS of fio, the median of $REPEAT runs; range: the slowest and" \
	"the fastest run. /direct: median throughput against readahead=direct's on the same" \
	"backend (higher is better); auto runs the policy it resolves to a second time." \
	"ahead: pages_read_ahead; loads: pages read from the backend (backend loads);" \
	"swapins: pages brought back (reclaim swapins). A read of the whole file" \
	"needs $((SIZE_MB * 256)) pages, the random reads $((IO_MB * 256))."
echo "md5 of the file read back after each mount's tests: $MD5_FIRST (the same on every mount)." \
	"Compression ratio (zpool): ${R[zpool.direct.ratio]:--}. Total time ${TOTAL_SECS} s."
[ "$NR_EXTRA_RECLAIMS" -eq 0 ] ||
	echo "tierctl reclaim all left pages resident and was repeated $NR_EXTRA_RECLAIMS times" \
		"in all (read-back pages: a batch that only promotes pages in use ends it)."

# --- results for bench/run -----------------------------------------------------

if [ -n "$RESULTS" ]; then
	for b in "${BACKEND_LIST[@]}"; do
		for t in "${TESTS[@]}"; do
			for p in "${POLICY_LIST[@]}"; do
				[ "$p" != direct ] || continue
				result "$b, $(policy_label "$b" "$p"): ${TEST_LABEL[$t]}" "${TEST_UNIT[$t]}" \
					"${R[$b.$p.$t.speed]}" "direct" "${R[$b.direct.$t.speed]}"
			done
		done
	done
	plot speedup logbars "Re-read of evicted data: throughput against readahead=direct" \
		"backend, read" "policy / direct"
	for b in "${BACKEND_LIST[@]}"; do
		for t in "${TESTS[@]}"; do
			for p in "${POLICY_LIST[@]}"; do
				[ "$p" != direct ] || continue
				point speedup "$p" "$b ${t}" "$(ratio "$b.$p" "$t")"
			done
		done
	done
	for b in "${BACKEND_LIST[@]}"; do
		for p in "${POLICY_LIST[@]}"; do
			line=
			for t in "${TESTS[@]}"; do
				line+="${line:+; }$t ${R[$b.$p.$t.secs]} s (range ${R[$b.$p.$t.range]}"
				line+=" ${TEST_UNIT[$t]}), hits ${R[$b.$p.$t.hits]}"
				line+=" misses ${R[$b.$p.$t.misses]} ahead ${R[$b.$p.$t.ahead]}"
				line+=" swapins ${R[$b.$p.$t.swapins]} loads ${R[$b.$p.$t.loads]}"
			done
			note "$b, $(policy_label "$b" "$p"): $line"
		done
	done
	note "Each value is the median of $REPEAT runs (range: slowest-fastest); ratio: the" \
		"policy's throughput / direct's on the same backend (higher is better);" \
		"ahead = pages_read_ahead, loads = pages read from the backend. A whole-file read" \
		"needs $((SIZE_MB * 256)) pages, the random reads $((IO_MB * 256))."
	[ "$NR_EXTRA_RECLAIMS" -eq 0 ] ||
		note "tierctl reclaim all left pages resident and was repeated $NR_EXTRA_RECLAIMS" \
			"times in all before the reads (not timed): one call stops at a batch that" \
			"only promotes pages in use."
	param data "${SIZE_MB} MiB, fio buffer_compress_percentage=$COMPRESS refill_buffers randseed=1"
	param tierfs "a fresh mount per backend and policy: mem=${MEM_MB}m cache=never compressor=lz4 swapsize=${FS_MB}m; file backend in $SWAP_DIR"
	param reads "tierctl reclaim all before each; dd bs=4k and bs=1M of the whole file; fio randread bs=4k psync io_size=${IO_MB}m randseed=1; $REPEAT runs each, the median"
	param md5 "$MD5_FIRST on every mount"
fi
exit 0
