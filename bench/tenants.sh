#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Tenant isolation: does a tenant streaming a large file evict a second
# tenant's hot set?  The question (the target): the hot tenant's re-read time
# beside the streamer stays within 1.2x of its time alone.
#
# One tierfs (cache=never, so every read reaches the daemon) with a global
# budget mem= smaller than both tenants' shares together, so that the budget
# is what they contend for.  Two cgroup v1 memory cgroups, "hot" and
# "stream" (512 MiB each: a cg_share=50% share of 256 MiB each, the hot set
# fits in it).  The hot tenant writes its hot set (128 MiB) and re-reads it
# with fio (4 KiB randread, psync) for --runtime seconds (a) alone, (b) while
# the stream tenant writes and reads a 2 GiB file in a loop (fio write 1M,
# dd read 1M).  The hot tenant keeps re-reading (unmeasured) through the
# streamer's first write pass, so that (b) starts with the budget full: a
# set left idle that long is cold by any LRU's measure, in tierfs as in the
# kernel, and is not what the question is about.  Each tenant's resident and swapped bytes come from tierctl
# stats (sampled every 0.25 s, both phases alike), the hot tenant's pages
# loaded back from the drops of its swapped bytes between samples (a lower
# bound: tierfs counts swap-ins per mount, not per tenant).
#
# After the streamer stops, the hot set is re-read alone once more: the
# drift of the "alone" figure.
#
# The same then runs on fresh mounts, as anchors (--refs):
#   one      hot and stream processes in ONE cgroup (one tenant, one pair of
#            LRU lists): what the tenant separation buys;
#   share    the two cgroups, the stream tenant's share cut to mem/4 with
#            tierctl set: the streamer is over its share and pays with its
#            own pages, with the same compression and swap-in work as in the
#            main run: the slowdown that is CPU and FUSE, not eviction;
#   nomem    the two cgroups, mem= and the stream's share above both data
#            sets: nothing is evicted or compressed, the streamer's bare
#            FUSE traffic.
#
# Exit status: 0 done (the target is printed, never enforced), 1 a step could
# not run (mount, fio, the streamer, the daemon died) or the hot set read back
# wrong, 2 usage, 77 skipped (not root, no /dev/fuse, no cgroup v1 memory
# controller, no fio).

# Functions run through traps and in the background look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: tenants.sh [--tierfs PATH] [--tierctl PATH] [--backend B] [--mem-mb N]
                  [--hot-mb N] [--stream-mb N] [--hot-limit-mb N]
                  [--stream-limit-mb N] [--runtime S] [--compress PCT]
                  [--refs LIST] [--quick] [--results FILE]

  --tierfs PATH   tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH  tierctl binary (default: next to tierfs, else tierctl in PATH)
  --backend B     zpool (default), ramdisk, file (a swap file in /var/tmp) or
                  file:PATH
  --mem-mb N      tierfs mem=, the global resident budget, MiB (256)
  --hot-mb N      the hot set, MiB (128)
  --stream-mb N   the streamed file, MiB (2048)
  --hot-limit-mb N     memory.limit_in_bytes of the hot cgroup, MiB (512:
                  a 256 MiB share at cg_share=50%); also the one cgroup's
  --stream-limit-mb N  memory.limit_in_bytes of the stream cgroup, MiB (512)
  --runtime S     seconds of each hot re-read phase (20)
  --compress PCT  fio --buffer_compress_percentage of both tenants' data (50)
  --refs LIST     the anchors, comma-separated, of one, share, nomem, or
                  none (default one,share,nomem; see the top of the script)
  --quick         --mem-mb 64 --hot-mb 16 --stream-mb 256 --hot-limit-mb 128
                  --stream-limit-mb 128 --runtime 3 (smoke test)
  --results FILE  append TSV records for bench/run (see bench/run)

Must run as root: it creates memory cgroups and mounts.  The daemon runs in
the root cgroup (its own cgroup is no tenant); only the workloads are in the
tenant cgroups, which cache=never keeps free of page cache.
EOF
}

TIERFS=
TIERCTL=
BACKEND=zpool
MEM_MB=256
HOT_MB=128
STREAM_MB=2048
HOT_LIMIT_MB=512
STREAM_LIMIT_MB=512
RUNTIME=20
COMPRESS=50
REFS=one,share,nomem
QUICK=0
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--backend) BACKEND=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--hot-mb) HOT_MB=${2-}; shift ;;
	--stream-mb) STREAM_MB=${2-}; shift ;;
	--hot-limit-mb) HOT_LIMIT_MB=${2-}; shift ;;
	--stream-limit-mb) STREAM_LIMIT_MB=${2-}; shift ;;
	--runtime) RUNTIME=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--refs) REFS=${2-}; shift ;;
	--results) RESULTS=${2-}; shift ;;
	--quick)
		QUICK=1; MEM_MB=64; HOT_MB=16; STREAM_MB=256; HOT_LIMIT_MB=128
		STREAM_LIMIT_MB=128; RUNTIME=3
		;;
	-h|--help) usage; exit 0 ;;
	*) echo "tenants.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=tenants.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$MEM_MB" "$HOT_MB" "$STREAM_MB" "$HOT_LIMIT_MB" "$STREAM_LIMIT_MB" "$RUNTIME"
want_percent --compress "$COMPRESS"
CONFIGS=(sep)
if [ "$REFS" != none ]; then
	for ref in ${REFS//,/ }; do
		case "$ref" in
		one|share|nomem) CONFIGS+=("$ref") ;;
		*) echo "tenants.sh: --refs wants one, share, nomem or none" >&2; exit 2 ;;
		esac
	done
fi
case "$BACKEND" in
zpool|ramdisk) ;;
file) BACKEND=file:/var/tmp/tierfs-bench-tenants.swap ;;
file:/*) ;;
*) echo "tenants.sh: --backend wants zpool, ramdisk, file or file:/ABSOLUTE/PATH" >&2; exit 2 ;;
esac
[ -z "$RESULTS" ] || [ "${RESULTS#-}" = "$RESULTS" ] ||
	{ echo "tenants.sh: bad --results '$RESULTS'" >&2; exit 2; }

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio fusermount3 findmnt md5sum awk
require_memcg_v1
find_tierfs
find_tierctl
require_backend "$BACKEND"

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/tierfs-tenants.XXXXXX) || die "mktemp failed"
MNT=$WORK/mnt
LOG=$WORK/log
CG_BASE=$CG_ROOT/tierfs-bench-tenants.$$
CG_HOT=$CG_BASE.hot
CG_STREAM=$CG_BASE.stream
CG_ONE=$CG_BASE.one
DAEMON_PID=
SAMPLER_PID=
STREAM_PID=
WARM_PID=
# Sampling period of tierctl stats, the same in every phase.
SAMPLE_S=0.25
# Mount size and backend capacity: both data sets and slack.
FS_MB=$((HOT_MB + STREAM_MB + 256))
SWAP_MB=$((HOT_MB + STREAM_MB + 128))
# The "nomem" mount: everything fits below the reclaim threshold (15/16).
BIG_MEM_MB=$(((HOT_MB + STREAM_MB) * 5 / 4 + 64))
# The "share" anchor's stream share.
SMALL_SHARE_MB=$((MEM_MB / 4))
HOT_PAGES=$((HOT_MB * 256))

# kill_cg CGROUP: ends every process in CGROUP (all of them started here),
# TERM first, KILL after 3 s.
kill_cg()
{
	local pids sig=TERM

	[ -d "$1" ] || return 0
	for i in $(seq 60); do
		pids=$(cat "$1/cgroup.procs" 2>/dev/null)
		[ -n "$pids" ] || return 0
		[ "$i" -le 30 ] || sig=KILL
		# shellcheck disable=SC2086
		kill -s "$sig" $pids 2>/dev/null
		sleep 0.1
	done
	echo "$NAME: processes left in $1: $(paste -sd' ' - <"$1/cgroup.procs" 2>/dev/null)" >&2
}

# stop_job PID: ends a background job of this shell (none if PID is empty)
# and reaps it.
stop_job()
{
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

stop_sampler()
{
	stop_job "$SAMPLER_PID"
	SAMPLER_PID=
}

# unmount: unmounts MNT and waits for the daemon; sets R[daemon_exit.$CFG].
unmount()
{
	local rc=

	if is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>>"$LOG" || umount "$MNT" 2>>"$LOG" || umount -l "$MNT"
	fi
	if [ -n "$DAEMON_PID" ]; then
		for _ in $(seq 100); do
			kill -0 "$DAEMON_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
		rc=$?
		DAEMON_PID=
	fi
	[ -z "${CFG-}" ] || R[daemon_exit.$CFG]=$rc
}

cleanup()
{
	stop_sampler
	kill_cg "$CG_STREAM"
	kill_cg "$CG_ONE"
	kill_cg "$CG_HOT"
	STREAM_PID=
	unmount
	cg_remove "$CG_HOT" "$CG_STREAM" "$CG_ONE"
	rm -f "$LOG" "$WORK"/stats.* "$WORK"/samples.* "$WORK"/stream.*
	cd / && rmdir "$MNT" "$WORK" 2>/dev/null
}
enter_work "$MNT"

cg_new "$CG_HOT" "$HOT_LIMIT_MB" >/dev/null || die "cannot create memory cgroup $CG_HOT"
cg_new "$CG_STREAM" "$STREAM_LIMIT_MB" >/dev/null || die "cannot create memory cgroup $CG_STREAM"
cg_new "$CG_ONE" "$HOT_LIMIT_MB" >/dev/null || die "cannot create memory cgroup $CG_ONE"

declare -A R=()

# --- stats ----------------------------------------------------------------------

# stats_line JSON HOT-PATH STREAM-PATH: "swapins evicted hot_resident
# hot_swapped stream_resident stream_swapped" from tierctl's JSON (tenant
# values empty when the tenant does not exist yet).
stats_line()
{
	awk -v RS='{' -v hot="$2" -v str="$3" '
	function num(k,   m) {
		if (!match($0, "\"" k "\":[0-9]+"))
			return ""
		m = substr($0, RSTART, RLENGTH)
		sub(/.*:/, "", m)
		return m
	}
	/"swapins":/ { si = num("swapins"); ev = num("evicted") }
	index($0, "\"path\":\"" hot "\"") { hr = num("resident_bytes"); hs = num("swapped_bytes") }
	index($0, "\"path\":\"" str "\"") { sr = num("resident_bytes"); ss = num("swapped_bytes") }
	END { printf "%s %s %s %s %s %s\n", si, ev, hr, hs, sr, ss }' "$1"
}

# snapshot FILE: tierctl stats --json into FILE.
snapshot()
{
	"$TIERCTL" stats "$MNT" --json >"$1" 2>>"$LOG"
}

# sampler FILE: every SAMPLE_S one stats_line into FILE.
sampler()
{
	local json=$WORK/stats.sample

	while :; do
		snapshot "$json" && stats_line "$json" "$HOT_PATH" "$STREAM_PATH" >>"$1"
		sleep "$SAMPLE_S"
	done
}

# tenant_field JSON PATH KEY: a tenant's number in the stats.
tenant_field()
{
	awk -v RS='{' -v p="$2" -v k="$3" 'index($0, "\"path\":\"" p "\"") {
		if (match($0, "\"" k "\":[0-9]+")) { m = substr($0, RSTART, RLENGTH); sub(/.*:/, "", m); print m }
	}' "$1"
}

# --- the workloads ----------------------------------------------------------------

# hot_write CGROUP: the hot set, written by a process in CGROUP.
hot_write()
{
	in_cg "$1" fio --name=hotw --filename="$MNT/hot" --rw=write --bs=1M --size="${HOT_MB}m" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed=7 \
		--ioengine=psync --fallocate=none --minimal >/dev/null 2>>"$LOG"
}

hot_md5()
{
	in_cg "$1" md5sum "$MNT/hot" 2>>"$LOG" | cut -c1-32
}

# hot_read CGROUP: fio 4 KiB randread of the hot set for RUNTIME seconds;
# prints "IOPS p99_usec" (terse v3: error 5, read IOPS 8, clat percentiles
# 18-37 in usec).
hot_read()
{
	local out

	out=$(in_cg "$1" fio --name=hot --filename="$MNT/hot" --rw=randread --bs=4k \
		--size="${HOT_MB}m" --ioengine=psync --invalidate=0 --direct=0 \
		--runtime="$RUNTIME" --time_based --randseed=1 --minimal 2>>"$LOG") || return 1
	printf '%s\n' "$out" | awk -F';' '
		$1 == "3" {
			if ($5 != 0) exit 1
			p99 = ""
			for (i = 18; i <= 37; i++)
				if ($i ~ /^99\.0+%=/) { p99 = $i; sub(/.*=/, "", p99) }
			printf "%.0f %s\n", $8, p99
			found = 1
		}
		END { exit !found }'
}

# hot_warm_start CGROUP: the same re-read in the background, unmeasured, until
# hot_warm_stop.
hot_warm_start()
{
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$1" fio --name=warm \
		--filename="$MNT/hot" --rw=randread --bs=4k --size="${HOT_MB}m" --ioengine=psync \
		--invalidate=0 --direct=0 --runtime=3600 --time_based --randseed=2 \
		--output=/dev/null 2>>"$LOG" 9>&- &
	WARM_PID=$!
}

hot_warm_stop()
{
	stop_job "$WARM_PID"
	WARM_PID=
}

# The streamer: fio writes the file (1 MiB, psync), dd reads it (1 MiB), in
# a loop until killed; one line a pass into LOG: "w|r START_NS END_NS".
# shellcheck disable=SC2016
STREAM_LOOP='
file=$1 mb=$2 compress=$3 log=$4
pass=0
while :; do
	pass=$((pass + 1))
	s=$(date +%s%N)
	fio --name=stream --filename="$file" --rw=write --bs=1M --size="${mb}m" \
		--buffer_compress_percentage="$compress" --refill_buffers --randseed="$pass" \
		--ioengine=psync --fallocate=none --minimal >/dev/null || exit 1
	e=$(date +%s%N)
	echo "w $s $e" >>"$log"
	dd if="$file" of=/dev/null bs=1M status=none || exit 1
	echo "r $e $(date +%s%N)" >>"$log"
done'

# stream_start CGROUP LOG: the streamer in CGROUP, in the background.
stream_start()
{
	: >"$2"
	# Not through in_cg: $! must be the loop itself.
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$1" bash -c "$STREAM_LOOP" stream \
		"$MNT/stream" "$STREAM_MB" "$COMPRESS" "$2" 2>>"$LOG" 9>&- &
	STREAM_PID=$!
}

# stream_stop CGROUP: the loop first (no new pass), then what it left running.
stream_stop()
{
	[ -n "$STREAM_PID" ] || return 0
	stop_job "$STREAM_PID"
	STREAM_PID=
	kill_cg "$1"
}

# stream_wait_pass LOG: waits for the streamer's first write pass, so that
# the budget is full and contended when the measurement starts.
stream_wait_pass()
{
	for _ in $(seq 6000); do
		grep -q '^w ' "$1" && return 0
		kill -0 "$STREAM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# --- one configuration ------------------------------------------------------------

# fail WHAT: the configuration CFG stops here.
fail()
{
	R[failed.$CFG]=$1
	echo "$NAME: $CFG: $1 failed" >&2
	return 1
}

alive()
{
	kill -0 "$DAEMON_PID" 2>/dev/null || { R[daemon_died.$CFG]=1; return 1; }
}

# phase NAME CGROUP: hot_read in CGROUP, stats before, sampled and after;
# R[CFG.NAME.*].
phase()
{
	local p=$CFG.$1 cg=$2 before after out rc samples=$WORK/samples.$CFG.$1

	: >"$samples"
	snapshot "$WORK/stats.$p.before" || return 1
	sampler "$samples" &
	SAMPLER_PID=$!
	R[$p.start]=$(now_ns)
	out=$(hot_read "$cg")
	rc=$?
	R[$p.end]=$(now_ns)
	stop_sampler
	[ "$rc" -eq 0 ] || return 1
	snapshot "$WORK/stats.$p.after" || return 1
	read -r "R[$p.iops]" "R[$p.p99]" <<<"$out"
	before=$(stats_line "$WORK/stats.$p.before" "$HOT_PATH" "$STREAM_PATH")
	after=$(stats_line "$WORK/stats.$p.after" "$HOT_PATH" "$STREAM_PATH")
	read -r b_si b_ev _ <<<"$before"
	read -r a_si a_ev "R[$p.hot_res]" "R[$p.hot_sw]" "R[$p.str_res]" "R[$p.str_sw]" <<<"$after"
	R[$p.swapins]=$((a_si - b_si))
	R[$p.evicted]=$((a_ev - b_ev))
	# Sampled: the hot tenant's lowest resident, highest swapped, and the
	# sum of the drops of its swapped bytes (pages it loaded back, at least).
	read -r "R[$p.hot_res_min]" "R[$p.hot_sw_max]" "R[$p.hot_loaded]" "R[$p.samples]" <<<"$(
		awk -v b="$before" 'BEGIN { split(b, f, " "); prev = f[4] }
			$3 != "" {
				if (min == "" || $3 < min) min = $3
				if ($4 > max) max = $4
				if (prev != "" && $4 < prev) down += prev - $4
				prev = $4; n++
			}
			END { printf "%s %s %.0f %d\n", (min == "" ? "-" : min), max + 0, down / 4096, n }
		' "$samples")"
}

# run_config CFG LABEL HOT-CG STREAM-CG MEM-MB [STREAM-SHARE-MB]: a fresh
# mount, the hot set alone, beside the streamer and alone again.
run_config()
{
	local hot_cg=$3 stream_cg=$4 mem=$5 share=${6-} slog=$WORK/stream.$1 md5

	CFG=$1
	R[label.$CFG]=$2
	R[mem.$CFG]=$mem
	HOT_PATH=${hot_cg#"$CG_ROOT"}
	STREAM_PATH=${stream_cg#"$CG_ROOT"}
	echo "$NAME: $CFG: mount mem=${mem}m" >&2
	"$TIERFS" "$MNT" -f -o "size=${FS_MB}m,mem=${mem}m,backend=$BACKEND,swapsize=${SWAP_MB}m,cache=never" \
		2>>"$LOG" &
	DAEMON_PID=$!
	wait_mounted "$MNT" "$DAEMON_PID" || { fail mount; return 1; }

	echo "$NAME: $CFG: hot set ${HOT_MB} MiB" >&2
	hot_write "$hot_cg" || { fail "hot write"; return 1; }
	md5=$(hot_md5 "$hot_cg")
	[ -n "$md5" ] || { fail "hot md5"; return 1; }
	R[md5_before.$CFG]=$md5
	if [ -n "$share" ]; then
		"$TIERCTL" set "$MNT" cgroup="$STREAM_PATH" mem="${share}m" >>"$LOG" 2>&1 ||
			{ fail "tierctl set cgroup=$STREAM_PATH"; return 1; }
	fi

	echo "$NAME: $CFG: hot re-read alone, ${RUNTIME} s" >&2
	phase alone "$hot_cg" || { fail "hot re-read alone"; return 1; }
	alive || { fail "daemon"; return 1; }

	echo "$NAME: $CFG: streamer ${STREAM_MB} MiB: first write pass" >&2
	R[$CFG.stream_t0]=$(now_ns)
	hot_warm_start "$hot_cg"
	stream_start "$stream_cg" "$slog"
	stream_wait_pass "$slog" || { hot_warm_stop; fail "streamer's first pass"; return 1; }
	hot_warm_stop
	echo "$NAME: $CFG: hot re-read beside the streamer, ${RUNTIME} s" >&2
	phase with "$hot_cg" || { fail "hot re-read beside the streamer"; return 1; }
	kill -0 "$STREAM_PID" 2>/dev/null || { fail "streamer (died during the phase)"; return 1; }
	stream_stop "$stream_cg"
	alive || { fail "daemon"; return 1; }
	echo "$NAME: $CFG: hot re-read alone again, ${RUNTIME} s" >&2
	phase again "$hot_cg" || { fail "hot re-read alone again"; return 1; }
	alive || { fail "daemon"; return 1; }
	snapshot "$WORK/stats.$CFG.end" || { fail "tierctl stats"; return 1; }
	R[hot_limit.$CFG]=$(tenant_field "$WORK/stats.$CFG.end" "$HOT_PATH" limit_bytes)
	R[str_limit.$CFG]=$(tenant_field "$WORK/stats.$CFG.end" "$STREAM_PATH" limit_bytes)
	R[hot_source.$CFG]=$(awk -v RS='{' -v p="$HOT_PATH" 'index($0, "\"path\":\"" p "\"") {
		if (match($0, /"source":"[^"]*"/)) print substr($0, RSTART + 10, RLENGTH - 11) }' \
		"$WORK/stats.$CFG.end")
	R[budget_exceeded.$CFG]=$(json_num budget_exceeded "$WORK/stats.$CFG.end")

	# The streamer's speed over its completed passes, and its passes during
	# the measurement.
	read -r "R[$CFG.str_wr]" "R[$CFG.str_rd]" "R[$CFG.str_passes]" <<<"$(
		awk -v mb="$STREAM_MB" -v s="${R[$CFG.with.start]}" -v e="${R[$CFG.with.end]}" '
			{ t[$1] += ($3 - $2) / 1e9; n[$1]++ }
			$3 >= s && $2 <= e { during++ }
			END {
				printf "%s %s %d\n",
					(t["w"] > 0 ? sprintf("%.0f", n["w"] * mb / t["w"]) : "-"),
					(t["r"] > 0 ? sprintf("%.0f", n["r"] * mb / t["r"]) : "-"), during
			}' "$slog")"

	echo "$NAME: $CFG: hot set read back" >&2
	md5=$(hot_md5 "$hot_cg") || { fail "hot md5 after"; return 1; }
	R[md5_after.$CFG]=$md5
	[ "$md5" = "${R[md5_before.$CFG]}" ] || { R[corrupt.$CFG]=1; fail "hot set read back"; return 1; }
	rm -f "$MNT/hot" "$MNT/stream"
	unmount
	R[done.$CFG]=1
}

# --- run --------------------------------------------------------------------------

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
others=$(pgrep -a -x 'tierfs|fio' 2>/dev/null | awk '{ print $1 "(" $2 ")" }' | paste -sd' ' -)
echo "# tierfs tenant isolation benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"commit $commit, quick=$QUICK"
echo "# tierfs: mem=${MEM_MB}m backend=$BACKEND cache=never size=${FS_MB}m swapsize=${SWAP_MB}m;" \
	"daemon in the root cgroup; $TIERFS"
echo "# cgroups v1: hot limit ${HOT_LIMIT_MB}MiB, stream limit ${STREAM_LIMIT_MB}MiB" \
	"(cg_share=50%: shares $((HOT_LIMIT_MB / 2)) and $((STREAM_LIMIT_MB / 2)) MiB);" \
	"one cgroup: limit ${HOT_LIMIT_MB}MiB"
echo "# hot: ${HOT_MB}MiB written (fio 1M, compress ${COMPRESS}%), re-read by fio randread 4k" \
	"psync ${RUNTIME}s, alone then beside the streamer; stats sampled every ${SAMPLE_S}s"
echo "# stream: ${STREAM_MB}MiB, fio write 1M + dd read 1M in a loop; measured from its" \
	"first write pass on"
echo "# anchors: ${CONFIGS[*]:1}"
echo "#   one: hot and stream in one cgroup (limit ${HOT_LIMIT_MB}MiB), mem=${MEM_MB}m"
echo "#   share: the stream tenant's share cut to ${SMALL_SHARE_MB}MiB (tierctl set), mem=${MEM_MB}m"
echo "#   nomem: mem=${BIG_MEM_MB}m, stream share set to it (tierctl set): nothing evicted"
[ -z "$others" ] || echo "# WARNING: running beside this benchmark: $others"
[ "$HOT_MB" -le $((HOT_LIMIT_MB / 2)) ] ||
	echo "# NOTE: the hot set is larger than the hot tenant's share ($((HOT_LIMIT_MB / 2)) MiB)"
[ $((HOT_LIMIT_MB / 2 + STREAM_LIMIT_MB / 2)) -gt "$MEM_MB" ] ||
	echo "# NOTE: the shares fit in mem=: the global budget is not contended by the shares"

START=$(now_ns)
for cfg in "${CONFIGS[@]}"; do
	case "$cfg" in
	sep) run_config sep "tenants" "$CG_HOT" "$CG_STREAM" "$MEM_MB" ;;
	one) run_config one "one cgroup" "$CG_ONE" "$CG_ONE" "$MEM_MB" ;;
	share)
		run_config share "stream share ${SMALL_SHARE_MB} MiB" "$CG_HOT" "$CG_STREAM" \
			"$MEM_MB" "$SMALL_SHARE_MB"
		;;
	nomem)
		run_config nomem "no memory contention" "$CG_HOT" "$CG_STREAM" "$BIG_MEM_MB" \
			"$BIG_MEM_MB"
		;;
	esac
	stream_stop "$CG_STREAM"
	stream_stop "$CG_ONE"
	stop_sampler
	kill_cg "$CG_HOT"
	kill_cg "$CG_STREAM"
	kill_cg "$CG_ONE"
	rm -f "$MNT/hot" "$MNT/stream" 2>/dev/null
	unmount
done
CFG=
SECS=$(( ($(now_ns) - START) / 1000000000 ))

# --- derived values -----------------------------------------------------------------

for cfg in "${CONFIGS[@]}"; do
	for ph in alone with; do
		iops=${R[$cfg.$ph.iops]-}
		[ -n "$iops" ] && [ "$iops" -gt 0 ] 2>/dev/null &&
			R[$cfg.$ph.reread]=$(awk -v p="$HOT_PAGES" -v i="$iops" 'BEGIN { printf "%.2f\n", p / i }')
	done
	a=${R[$cfg.alone.iops]-} w=${R[$cfg.with.iops]-}
	if [ -n "$a" ] && [ -n "$w" ] && [ "$w" -gt 0 ] 2>/dev/null; then
		R[$cfg.slowdown]=$(awk -v a="$a" -v w="$w" 'BEGIN { printf "%.2f\n", a / w }')
	fi
done

mib()
{
	awk -v b="${1-}" 'BEGIN { if (b == "" || b == "-") print ""; else printf "%.1f\n", b / 1048576 }'
}

# val CFG KEY [mib] [sep-only]: a value for the table, "" when not measured.
# sep-only: the hot and stream tenants are one in the one-cgroup run.
val()
{
	local v=${R[$1.$2]-}

	[ "${4-}" = sep-only ] && [ "$1" = one ] && v=
	[ "${3-}" = mib ] && v=$(mib "$v")
	echo "$v"
}

# ROWS: LABEL|UNIT|KEY|mib|sep-only|BETTER (higher or lower, where the unit does not say)
ROWS=(
	"hot 4K randread psync, alone|IOPS|alone.iops||"
	"hot 4K randread psync, beside the streamer|IOPS|with.iops||"
	"hot 4K randread psync, alone again after the streamer|IOPS|again.iops||"
	"hot set re-read once (pages / IOPS), alone|s|alone.reread||"
	"hot set re-read once (pages / IOPS), beside the streamer|s|with.reread||"
	"hot re-read slowdown beside the streamer (target <= 1.2)|x|slowdown||"
	"hot p99 read latency, alone|us|alone.p99||"
	"hot p99 read latency, beside the streamer|us|with.p99||"
	"hot tenant resident, end of the streamer phase|MiB|with.hot_res|mib|sep-only|higher"
	"hot tenant resident, lowest sampled beside the streamer|MiB|with.hot_res_min|mib|sep-only|higher"
	"hot tenant swapped, end of the streamer phase|MiB|with.hot_sw|mib|sep-only"
	"hot tenant swapped, highest sampled beside the streamer|MiB|with.hot_sw_max|mib|sep-only"
	"hot pages loaded back beside the streamer (lower bound)|pages|with.hot_loaded||sep-only"
	"swap-ins beside the streamer, all tenants|pages|with.swapins||"
	"swap-ins alone, all tenants|pages|alone.swapins||"
	"swap-ins alone again after the streamer, all tenants|pages|again.swapins||"
	"evicted beside the streamer, all tenants|pages|with.evicted||"
	"stream tenant resident, end of the streamer phase|MiB|with.str_res|mib|sep-only"
	"stream tenant swapped, end of the streamer phase|MiB|with.str_sw|mib|sep-only"
	"streamer write (completed passes)|MiB/s|str_wr||"
	"streamer read (completed passes)|MiB/s|str_rd||"
)

# --- report -----------------------------------------------------------------------

echo
declare -A SHORT=([sep]=tenants [one]="one cgroup" [share]="stream ${SMALL_SHARE_MB}M" [nomem]="no mem. cont.")
fmt="%-58s | %-6s$(printf ' | %%13s%.0s' "${CONFIGS[@]}")\n"
heads=()
for cfg in "${CONFIGS[@]}"; do
	heads+=("${SHORT[$cfg]}")
done
# shellcheck disable=SC2059
printf "$fmt" metric unit "${heads[@]}"
for row in "${ROWS[@]}"; do
	IFS='|' read -r label unit key ismib seponly _ <<<"$row"
	cells=()
	for cfg in "${CONFIGS[@]}"; do
		v=$(val "$cfg" "$key" "$ismib" "$seponly")
		cells+=("${v:--}")
	done
	# shellcheck disable=SC2059
	printf "$fmt" "$label" "$unit" "${cells[@]}"
done
echo
for cfg in "${CONFIGS[@]}"; do
	line="${R[label.$cfg]}: mem=${R[mem.$cfg]}m"
	if [ -n "${R[done.$cfg]-}" ]; then
		line+=", hot tenant share $(mib "${R[hot_limit.$cfg]-}") MiB (${R[hot_source.$cfg]-})"
		if [ "$cfg" = one ]; then
			line+=" (hot and stream: at the end resident $(mib "${R[$cfg.with.hot_res]-}") MiB,"
			line+=" swapped $(mib "${R[$cfg.with.hot_sw]-}") MiB)"
		else
			line+=", stream share $(mib "${R[str_limit.$cfg]-}") MiB"
		fi
		line+=", streamer passes during the measurement ${R[$cfg.str_passes]-}"
		line+=", stats samples ${R[$cfg.with.samples]-}"
		line+=", budget_exceeded ${R[budget_exceeded.$cfg]:-0}, hot md5 ok"
	else
		line+=": stopped at '${R[failed.$cfg]-}'"
	fi
	echo "$line"
done
echo "time: ${SECS} s"

verdict()
{
	awk -v s="${R[$1.slowdown]-}" 'BEGIN {
		if (s == "") print "not measured"; else if (s <= 1.2) print s " (ok)"; else print s " (MISSED)" }'
}
verdicts()
{
	local cfg out=

	for cfg in "${CONFIGS[@]}"; do
		out+="${out:+; }${R[label.$cfg]} $(verdict "$cfg")"
	done
	echo "$out"
}
echo
echo "target: hot re-read beside the streamer within 1.2x of alone: $(verdicts)"

# --- results for bench/run -----------------------------------------------------------

if [ -n "$RESULTS" ]; then
	for row in "${ROWS[@]}"; do
		IFS='|' read -r label unit key ismib seponly better <<<"$row"
		if [ "${#CONFIGS[@]}" -eq 1 ]; then
			result "$label" "$unit" "$(val sep "$key" "$ismib" "$seponly")" "-" "" "$better"
		fi
		for cfg in "${CONFIGS[@]:1}"; do
			result "$label" "$unit" "$(val sep "$key" "$ismib" "$seponly")" \
				"${R[label.$cfg]}" "$(val "$cfg" "$key" "$ismib" "$seponly")" "$better"
		done
	done
	param "tierfs" "mem=${MEM_MB}m backend=$BACKEND cache=never size=${FS_MB}m swapsize=${SWAP_MB}m, daemon in the root cgroup"
	param "cgroups v1" "hot limit ${HOT_LIMIT_MB} MiB (share $((HOT_LIMIT_MB / 2)) MiB), stream limit ${STREAM_LIMIT_MB} MiB (share $((STREAM_LIMIT_MB / 2)) MiB); one cgroup: limit ${HOT_LIMIT_MB} MiB"
	param "hot" "${HOT_MB} MiB (fio write 1M, buffer_compress_percentage=$COMPRESS), re-read by fio randread bs=4k psync ${RUNTIME}s randseed=1"
	param "stream" "${STREAM_MB} MiB, fio write 1M + dd read 1M in a loop, measured from its first write pass on"
	param "stats" "tierctl stats --json every ${SAMPLE_S} s in both phases"
	param "anchors" "one: both in one cgroup of ${HOT_LIMIT_MB} MiB; share: stream share ${SMALL_SHARE_MB} MiB (tierctl set); nomem: mem=${BIG_MEM_MB}m and the stream share set to it"
	plot iops bars "hot tenant: 4 KiB randread psync, alone, beside the streamer, alone again" "set-up (cgroups, shares)" IOPS
	for cfg in "${CONFIGS[@]}"; do
		point iops alone "${R[label.$cfg]}" "${R[$cfg.alone.iops]:--}"
		point iops "beside the streamer" "${R[label.$cfg]}" "${R[$cfg.with.iops]:--}"
		point iops "alone again" "${R[label.$cfg]}" "${R[$cfg.again.iops]:--}"
	done
	note "tenants: hot and stream in their own cgroups. one cgroup: both in one cgroup (one tenant," \
		"one pair of LRU lists): what the separation buys. stream share ${SMALL_SHARE_MB} MiB: the" \
		"streamer over its share pays with its own pages, with the same compression and swap-in work:" \
		"the slowdown that is CPU and FUSE, not eviction. no memory contention: nothing evicted" \
		"(the streamer's bare FUSE traffic on $(nproc) CPUs)."
	note "Target: hot re-read slowdown (alone IOPS / IOPS beside the streamer) <= 1.2: $(verdicts)."
	note "alone again: the hot set re-read alone after the streamer stopped, the drift of the alone figure."
	note "Hot pages loaded back: the sum of the drops of the hot tenant's swapped_bytes between" \
		"samples, a lower bound (swap-ins are counted per mount, not per tenant)."
	for cfg in "${CONFIGS[@]}"; do
		[ -z "${R[failed.$cfg]-}" ] ||
			note "${R[label.$cfg]}: stopped at '${R[failed.$cfg]}'; its later rows are not measured"
	done
fi

status=0
for cfg in "${CONFIGS[@]}"; do
	if [ -n "${R[failed.$cfg]-}" ]; then
		echo "$NAME: ${R[label.$cfg]}: '${R[failed.$cfg]}' failed" \
			"${R[daemon_died.$cfg]:+(the daemon died) }${R[corrupt.$cfg]:+(hot set read back wrong) }" >&2
		status=1
	fi
done
if [ "$status" -ne 0 ] && [ -s "$LOG" ]; then
	tail -n 20 "$LOG" >&2
fi
exit "$status"
