#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Far memory behind a network: what each microsecond between tierfs and its
# redis servers costs.  One Redis on loopback, reached through delayproxy,
# a relay that holds every reply DELAY µs (this kernel has no netem; the
# relay's own cost is the DELAY=0 row, and redis-benchmark's GET p50 gives
# the round trip each row really had).  For each delay: backend_bench's
# redis rows (store/load MB/s and latency per batch of 32 pages) and the
# pressure run (pressure.sh: a 512 MiB cgroup, 3 GiB of half-compressible
# data, zpool+redis against a kernel tmpfs with zswap and a swap file, both
# in the same run).  Prints the tables and a summary: per delay, the round
# trip, the store and load rates, and the tierfs/kernel ratios; the
# direct run has every backend, so zpool and the file backend stand beside
# redis in the same run.
#
# Exit status: 0 done (nothing is enforced), 1 a step failed, 2 usage, 77
# skipped (no redis-server or redis-benchmark, no redis backend; the pressure
# run: not root, no fio, no cgroup v1 memory controller).

# Functions run from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: farmem.sh --backend-bench PATH --proxy PATH [--tierfs PATH] [--tierctl PATH]
                 [--delays LIST] [--limit-mb N] [--data-mb N] [--no-pressure] [--quick]

  --backend-bench PATH  the backend_bench binary
  --proxy PATH    the delayproxy binary
  --tierfs PATH   tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH  tierctl binary (default: next to tierfs, else tierctl in PATH)
  --delays LIST   comma-separated µs added to each round trip (0,50,200)
  --limit-mb N    the pressure run's cgroup limit, MiB (512)
  --data-mb N     the pressure run's data, MiB (3072)
  --no-pressure   backend_bench alone
  --quick         backend_bench --quick at the first delay, no pressure run
                  (smoke test)
EOF
}

NAME=farmem.sh
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$HERE/common.sh"

BB= PROXY= TIERFS= TIERCTL= DELAYS=0,50,200 LIMIT_MB=512 DATA_MB=3072 PRESSURE=1 QUICK=
while [ $# -gt 0 ]; do
	case $1 in
	--backend-bench) BB=${2-}; shift ;;
	--proxy) PROXY=${2-}; shift ;;
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--delays) DELAYS=${2-}; shift ;;
	--limit-mb) LIMIT_MB=${2-}; shift ;;
	--data-mb) DATA_MB=${2-}; shift ;;
	--no-pressure) PRESSURE= ;;
	--quick) QUICK=1 PRESSURE= ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
[ -x "$BB" ] && [ -x "$PROXY" ] || { usage >&2; exit 2; }
[[ $DELAYS =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "$NAME: --delays wants µs, comma-separated" >&2; exit 2; }
want_positive "$LIMIT_MB" "$DATA_MB"
[ -n "$QUICK" ] && DELAYS=${DELAYS%%,*}
[ -z "$PRESSURE" ] || [ "$(id -u)" -eq 0 ] || skip "the pressure run must run as root"
command -v redis-benchmark >/dev/null || skip "redis-benchmark not installed"
find_tierfs
has_backend redis || skip "backend=redis not built into $TIERFS"
[ -n "$TIERCTL" ] || TIERCTL=$(dirname "$TIERFS")/tierctl

# shellcheck source=tests/redis/servers.sh
. "$HERE/../tests/redis/servers.sh"
PROXY_PID=
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-farmem.XXXXXX") || exit 1
cleanup()
{
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
	redis_stop_all
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(redis_free_port)
redis_start "$port" || die "redis-server did not start"
relay=$(redis_free_port 1)

# The GET round trip, p50 in µs, as redis-benchmark sees it on PORT.
rtt_us()
{
	redis-benchmark -p "$1" -t get -n 20000 -c 1 -q 2>/dev/null | tr '\r' '\n' |
		sed -n 's/.*p50=\([0-9.]*\) msec.*/\1/p' | tail -n 1 | awk '{ printf "%.0f", $1 * 1000 }'
}

# backend_bench's row of BACKEND (lz4 where it compresses, sealed where it
# may be), text data, one thread: "store load st_p50 ld_p50".
bb_row()
{
	awk -v be="$2" '$1 == be && ($2 == "lz4" || $2 == "-") && ($4 == "on" || $4 == "-") &&
		$5 == "text" && $6 == 1 { print $8, $9, $11, $15; exit }' "$1"
}

# A metric's tierfs value and ratio from a pressure report: "tierfs ratio".
pr_row()
{
	awk -F'|' -v m="$2" 'index($1, m) == 1 { gsub(/ /, "", $3); gsub(/ /, "", $4); print $3, $4 }' "$1"
}

echo "# farmem.sh: $(date -u '+%F %T') UTC, kernel $(uname -r), $(nproc) CPUs, commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo -)"
echo "# one Redis $(redis-server --version | awk '{ print $3 }') on 127.0.0.1:$port; delayproxy on :$relay holds each reply DELAY µs"
rtt_direct=$(rtt_us "$port")
echo "# direct GET round trip p50: $rtt_direct µs"
TIERFS_TEST_REDIS=127.0.0.1:$port "$BB" ${QUICK:+--quick} >"$WORK/bb-direct" 2>>"$WORK/log" ||
	die "backend_bench (direct) failed: $(tail -n 5 "$WORK/log")"
echo "## backend_bench, every backend, redis direct"
grep -v '^tierfs:' "$WORK/bb-direct"

for d in ${DELAYS//,/ }; do
	"$PROXY" "$relay" "$port" "$d" >"$WORK/proxy.out" 2>&1 &
	PROXY_PID=$!
	for _ in $(seq 50); do grep -q ready "$WORK/proxy.out" && break; sleep 0.1; done
	grep -q ready "$WORK/proxy.out" || die "delayproxy did not start: $(cat "$WORK/proxy.out")"
	rtt=$(rtt_us "$relay")
	echo "$rtt" >"$WORK/rtt-$d"
	echo "## delay $d µs: GET round trip p50 $rtt µs"
	TIERFS_TEST_REDIS=127.0.0.1:$relay "$BB" --backend redis ${QUICK:+--quick} >"$WORK/bb-$d" 2>>"$WORK/log" ||
		die "backend_bench (delay $d) failed: $(tail -n 5 "$WORK/log")"
	grep -v '^tierfs:' "$WORK/bb-$d"
	if [ -n "$PRESSURE" ]; then
		"$HERE/pressure.sh" --tierfs "$TIERFS" --tierctl "$TIERCTL" --limit-mb "$LIMIT_MB" \
			--data-mb "$DATA_MB" --kernel zswap --backend "zpool+redis://127.0.0.1:$relay" \
			>"$WORK/pr-$d" 2>>"$WORK/log" || die "pressure.sh (delay $d) failed: $(tail -n 5 "$WORK/log")"
		sed -n '/^metric/,$p' "$WORK/pr-$d"
	fi
	kill "$PROXY_PID"
	wait "$PROXY_PID" 2>/dev/null
	PROXY_PID=
	redis-cli -p "$port" dbsize | grep -qx 0 || die "keys left on the server after delay $d"
done

echo "## summary (backend_bench: text data, 1 thread, lz4, sealed; MB/s, µs per batch of 32 pages)"
printf '%-14s %6s | %7s %7s %7s %7s' tier rtt_us store load st_p50 ld_p50
[ -n "$PRESSURE" ] && printf ' | %-14s %-14s %-14s %-14s' "write MiB/s" "read MiB/s" "randread IOPS" "mmap unif IOPS"
echo
# row LABEL RTT BACKEND BB_OUTPUT PRESSURE_OUTPUT
row()
{
	# shellcheck disable=SC2046 # four numbers
	printf '%-14s %6s | %7s %7s %7s %7s' "$1" "$2" $(bb_row "$4" "$3")
	local report=$5 m
	if [ -n "$PRESSURE" ] && [ -f "$report" ]; then
		for m in "seq write 1M" "seq read 1M" "4K randread" "4K mmap x24 uniform"; do
			# shellcheck disable=SC2046 # "tierfs ratio"
			printf ' | %-14s' "$(printf '%s (%sx)' $(pr_row "$report" "$m"))"
		done
	fi
	echo
}
row "zpool (RAM)" - zpool "$WORK/bb-direct" /nonexistent
row "file (NVMe)" - file "$WORK/bb-direct" /nonexistent
row "redis direct" "$rtt_direct" redis "$WORK/bb-direct" /nonexistent
for d in ${DELAYS//,/ }; do
	row "redis +$d" "$(cat "$WORK/rtt-$d")" redis "$WORK/bb-$d" "$WORK/pr-$d"
done
[ -n "$PRESSURE" ] && echo "# (Nx) = tierfs / tmpfs+zswap+swapfile in the same pressure run"
exit 0
