#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Real work, as a new user would try it: untar a source tree of thousands
# of small files, rm -rf it, untar it again and git add and commit it,
# compile C sources;
# on kernel tmpfs and on tierfs with its defaults, over each transport
# (classic /dev/fuse, and FUSE over io_uring where the kernel has it).  Each
# side gets a fresh mount per repetition; the median of the repetitions is
# reported, with the spread.  On tierfs the FUSE requests of the untar and
# of the rm -rf are counted per file (tierctl stats, ops).
#
# Exit status: 0 done (nothing is enforced), 1 a step failed, 2 usage, 77
# skipped (not root, /dev/fuse unusable, no tar).

# Functions run from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: workloads.sh [--tierfs PATH] [--tierctl PATH] [--tree DIR] [--reps N]
                    [--quick] [--results FILE]

  --tierfs PATH   tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH  tierctl binary (default: next to tierfs, else tierctl in PATH)
  --tree DIR      the tree untarred, committed and removed (/usr/include)
  --reps N        repetitions per side (3)
  --quick         /usr/include/linux/netfilter, 1 repetition, 4 sources (smoke test)
  --results FILE  append TSV records for bench/run (see bench/run)

The compile step builds tierfs's own C sources (src/), two at a time.
Must run as root: it mounts.
EOF
}

TIERFS=
TIERCTL=
TREE=/usr/include
REPS=3
QUICK=0
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--tree) TREE=${2-}; shift ;;
	--reps) REPS=${2-}; shift ;;
	--quick) QUICK=1; TREE=/usr/include/linux/netfilter; REPS=1 ;;
	--results) RESULTS=${2-}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "workloads.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=workloads.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$REPS"
[ -d "$TREE" ] || { echo "$NAME: --tree $TREE is not a directory" >&2; exit 2; }
[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench tar gcc fusermount3 findmnt
find_tierfs
find_tierctl

SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/tierfs-workloads.XXXXXX) || die "mktemp failed"
MNT=$WORK/mnt
LOG=$WORK/log
HAS_GIT=0
command -v git >/dev/null 2>&1 && HAS_GIT=1

cleanup()
{
	if is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	rm -rf "$WORK/tree.tar" "$WORK/src" "$LOG"
	cd / && rmdir "$MNT" "$WORK" 2>/dev/null
}
enter_work "$MNT"

tar -C "$(dirname "$TREE")" -cf "$WORK/tree.tar" "$(basename "$TREE")" ||
	die "cannot tar $TREE"
NR_FILES=$(tar -tf "$WORK/tree.tar" | wc -l)
# The compile's sources and headers, copied in at each repetition.
mkdir "$WORK/src" && cp -r "$SRC_DIR/src" "$SRC_DIR/include" "$SRC_DIR/backends" "$WORK/src/" ||
	die "cannot copy the sources"
mapfile -t SOURCES < <(cd "$WORK/src" && find src -name '*.c' ! -name 'ring_none.c' | sort)
[ "$QUICK" -eq 0 ] || SOURCES=("${SOURCES[@]:0:4}")
read -ra FUSE_CFLAGS <<<"$(pkg-config --cflags fuse3 2>/dev/null)"
CFLAGS=(-O2 -c -Iinclude -Isrc -Ibackends ${FUSE_CFLAGS[@]+"${FUSE_CFLAGS[@]}"}
	-D_GNU_SOURCE -DFUSE_USE_VERSION=314 -DTIERFS_VERSION=\"bench\" -w)

# The sides: tmpfs, then tierfs over each transport the kernel has, the
# ring without and with its threads polling.
SIDES=(tmpfs classic)
[ -e /sys/module/fuse/parameters/enable_uring ] && SIDES+=(uring-nopoll uring)

mount_side()
{
	case "$1" in
	tmpfs) mount -t tmpfs -o size=4g tmpfs "$MNT" ;;
	*) "$TIERFS" "$MNT" -o "size=4g,$(transport_opts "$1")" 2>>"$LOG" ;;
	esac
}

# ops_total: the FUSE requests tierfs has served on MNT, every opcode.
ops_total()
{
	"$TIERCTL" stats "$MNT" --json 2>>"$LOG" |
		python3 -c 'import json, sys; print(sum(json.load(sys.stdin).get("ops", {}).values()))'
}

# timed CMD...: run CMD in MNT, print its seconds (3 decimals); fails with CMD.
timed()
{
	local start end

	start=$(now_ns)
	(cd "$MNT" && "$@") >>"$LOG" 2>&1 || return 1
	end=$(now_ns)
	awk -v ns=$((end - start)) 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

untar() { tar -xf "$WORK/tree.tar" -C u; }
git_commit()
{
	cd u && git init -q && git add -A &&
		git -c user.name=bench -c user.email=bench@localhost commit -q -m tree
}
compile() { cd c && printf '%s\n' "${SOURCES[@]}" | xargs -P 2 -n 4 gcc "${CFLAGS[@]}"; }
remove() { rm -rf u; }

# The tree's rm -rf right after its untar, so that both count its entries
# alone; git then commits a second copy.
declare -A T OPS
STEPS_RUN=(untar rm)
[ "$HAS_GIT" -eq 1 ] && STEPS_RUN+=(git)
STEPS_RUN+=(compile)

# one_rep SIDE: a fresh mount, every step timed into T[step.side] (a list).
one_rep()
{
	local side=$1 secs before

	mount_side "$side" || die "cannot mount $side: $(tail -n 3 "$LOG" | tr '\n' ' ')"
	mkdir "$MNT/u" || die "mkdir on $side failed"
	for step in "${STEPS_RUN[@]}"; do
		case $step in
		git) mkdir "$MNT/u" && tar -xf "$WORK/tree.tar" -C "$MNT/u" ;;
		compile) cp -r "$WORK/src" "$MNT/c" ;;
		esac || die "cannot set up $step on $side"
		[ "$side" = tmpfs ] || before=$(ops_total)
		case $step in
		untar) secs=$(timed untar) ;;
		git) secs=$(timed git_commit) ;;
		compile) secs=$(timed compile) ;;
		rm) secs=$(timed remove) ;;
		esac
		[ -n "$secs" ] || die "$step on $side failed: $(tail -n 3 "$LOG" | tr '\n' ' ')"
		T[$step.$side]+="$secs "
		if [ "$side" != tmpfs ] && { [ "$step" = untar ] || [ "$step" = rm ]; }; then
			OPS[$step.$side]=$(awk -v a="$before" -v b="$(ops_total)" -v n="$NR_FILES" \
				'BEGIN { printf "%.1f", (b - a) / n }')
		fi
	done
	if [ "$side" = tmpfs ]; then
		umount "$MNT"
	else
		fusermount3 -u "$MNT"
	fi
}

for rep in $(seq "$REPS"); do
	for side in "${SIDES[@]}"; do
		echo "$NAME: repetition $rep, $side" >&2
		one_rep "$side"
	done
done

# median LIST / spread LIST: of the space-separated seconds.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 }
	END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
	END { printf "%s-%s", lo, hi }'; }

commit=$(git -C "$SRC_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
echo "# tierfs real workloads: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, commit $commit"
echo "# tree $TREE ($NR_FILES entries); compile: ${#SOURCES[@]} tierfs sources, gcc -O2," \
	"2 at a time; $REPS repetitions, median (spread) in seconds; tierfs size=4g, defaults"
[ "$HAS_GIT" -eq 1 ] || echo "# git is not installed: no git row"
param tree "$TREE"
param entries "$NR_FILES"
param sources "${#SOURCES[@]}"
param reps "$REPS"
printf '%-10s' step
for side in "${SIDES[@]}"; do printf ' %20s' "$side"; done
printf '   tierfs/tmpfs speed\n'
for step in "${STEPS_RUN[@]}"; do
	base=$(median "${T[$step.tmpfs]}")
	printf '%-10s' "$step"
	for side in "${SIDES[@]}"; do
		printf ' %8s (%s)' "$(median "${T[$step.$side]}")" "$(spread "${T[$step.$side]}")"
	done
	for side in "${SIDES[@]:1}"; do
		med=$(median "${T[$step.$side]}")
		printf '   %s %.2f' "$side" "$(awk -v a="$base" -v b="$med" 'BEGIN { print a / b }')"
		result "$step, $side, s: lower is faster" s "$med" tmpfs "$base"
	done
	printf '\n'
done
for step in untar rm; do
	for side in "${SIDES[@]:1}"; do
		echo "# $step on $side: ${OPS[$step.$side]} FUSE requests per entry"
		note "$step on $side: ${OPS[$step.$side]} FUSE requests per entry (tierctl stats, ops)"
	done
done
note "Seconds, median of $REPS; spreads in the log. A speed against tmpfs is tmpfs's time / tierfs's."
