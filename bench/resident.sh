#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How close to kernel tmpfs is tierfs on resident data?  Mounts a tmpfs and a
# tierfs side by side, runs the same tests on each, interleaved so that drift
# on a noisy machine hits both, and prints a table with tierfs/tmpfs ratios.
# With --nullfs, a FUSE filesystem that does nothing runs them too: the
# transport's ceiling, and tierfs/nullfs shows how much of it tierfs reaches.
#
# Exit status: 0 done (targets are printed, never enforced), 1 a mount or a
# tool failed, 2 usage, 77 skipped (not root, /dev/fuse unusable, no fio).

# Functions run through measure() look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: resident.sh [--tierfs PATH] [--createloop PATH] [--nullfs PATH] [--size-mb N]
                   [--files N] [--runtime S] [--transports LIST] [--quick]
                   [--results FILE]

  --tierfs PATH      tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --createloop PATH  createloop binary (default: next to tierfs in bench/, else
                     ./build/bench/createloop, else built from createloop.c)
  --size-mb N        size of the sequential dd file in MiB (default 2048)
  --files N          files in the create/stat/unlink loop (default 20000)
  --runtime S        seconds each fio job runs (default 10)
  --transports LIST  a tierfs mount for each transport= in LIST (default
                     "uring classic", "classic" where the kernel has no FUSE
                     over io_uring); the last one is the tierfs column, so
                     by default the transport a mount gets by default;
                     uring-nopoll is transport=uring,ring_poll=0
  --nullfs PATH      also measure this nullfs binary (bench/nullfs.c), the FUSE
                     ceiling, and print tierfs/nullfs ratios
  --quick            --size-mb 256 --files 2000 --runtime 2 (smoke test)
  --results FILE     append TSV records for bench/run (see bench/run)

Must run as root: it mounts a kernel tmpfs and a tierfs in temporary dirs.
EOF
}

TIERFS=
CREATELOOP=
NULLFS=
RESULTS=
SIZE_MB=2048
NR_FILES=20000
RUNTIME=10
QUICK=0
# Short measurements (dd, createloop) keep the best of REPEAT runs; fio jobs
# run RUNTIME seconds each instead.
REPEAT=3
TRANSPORTS="uring classic"
[ -e /sys/module/fuse/parameters/enable_uring ] || TRANSPORTS=classic

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--createloop) CREATELOOP=${2-}; shift ;;
	--nullfs) NULLFS=${2-}; shift ;;
	--results) RESULTS=${2-}; shift ;;
	--size-mb) SIZE_MB=${2-}; shift ;;
	--files) NR_FILES=${2-}; shift ;;
	--runtime) RUNTIME=${2-}; shift ;;
	--transports) TRANSPORTS=${2-}; shift ;;
	--quick) QUICK=1; SIZE_MB=256; NR_FILES=2000; RUNTIME=2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "resident.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=resident.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$SIZE_MB" "$NR_FILES" "$RUNTIME"

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio fusermount3 mountpoint findmnt

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)

find_tierfs
FILESYSTEMS=tmpfs
for t in $TRANSPORTS; do
	case "$t" in
	classic|uring|uring-nopoll|auto) FILESYSTEMS="$FILESYSTEMS tierfs_$t"; MAIN=tierfs_$t ;;
	*) echo "$NAME: --transports: '$t' is not classic, uring, uring-nopoll or auto" >&2
		exit 2 ;;
	esac
done
[ -n "${MAIN-}" ] || { echo "$NAME: --transports: none given" >&2; exit 2; }
if [ -n "$NULLFS" ]; then
	[ -x "$NULLFS" ] || die "$NULLFS is not an executable"
	NULLFS=$(abs_path "$NULLFS")
	FILESYSTEMS="$FILESYSTEMS nullfs"
fi

# The fio file: 1 GiB, or the dd size when that is smaller (--quick).
FIO_MB=$((SIZE_MB < 1024 ? SIZE_MB : 1024))
# Both filesystems get the same cap; 4G unless the dd file needs more.
MOUNT_SIZE=4G
[ "$SIZE_MB" -le 3968 ] || MOUNT_SIZE=$((SIZE_MB + 128))m

need_mb=$(( (SIZE_MB > FIO_MB ? SIZE_MB : FIO_MB) * 3 + 256 ))
avail_mb=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
if [ -n "$avail_mb" ] && [ "$avail_mb" -lt "$need_mb" ]; then
	echo "resident.sh: warning: ${avail_mb} MiB available, ~${need_mb} MiB wanted" \
		"(a tierfs file may sit in the daemon and in the page cache)" >&2
fi

WORK=$(mktemp -d /tmp/tierfs-resident.XXXXXX) || die "mktemp failed"
SRC_MNT=$WORK/src
TMPFS_MNT=$WORK/tmpfs
NULLFS_MNT=$WORK/nullfs
LOG=$WORK/log

unmount_all()
{
	for mnt in "$WORK"/tierfs_* "$NULLFS_MNT"; do
		if mountpoint -q "$mnt" 2>/dev/null; then
			fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" || umount -l "$mnt"
		fi
	done
	for mnt in "$TMPFS_MNT" "$SRC_MNT"; do
		if mountpoint -q "$mnt" 2>/dev/null; then
			umount "$mnt" || umount -l "$mnt"
		fi
	done
	rm -f "$LOG"
	rmdir "$WORK"/tierfs_* "$NULLFS_MNT" "$TMPFS_MNT" "$SRC_MNT" "$WORK" 2>/dev/null
}
trap unmount_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir "$SRC_MNT" "$TMPFS_MNT" "$NULLFS_MNT" || die "mkdir in $WORK failed"
: >"$LOG"

# A private tmpfs holds the write source and, if needed, createloop, so the
# script needs neither /dev/shm nor an exec-able /tmp.
mount -t tmpfs -o size=256m,mode=0700 tierfs-bench-src "$SRC_MNT" ||
	skip "cannot mount a tmpfs here"
mount -t tmpfs -o size="$MOUNT_SIZE" tierfs-bench "$TMPFS_MNT" || die "tmpfs mount failed"
for t in $TRANSPORTS; do
	mnt=$WORK/tierfs_$t
	mkdir "$mnt" || die "mkdir $mnt failed"
	opts=$MOUNT_SIZE,$(transport_opts "$t")
	"$TIERFS" "$mnt" -o size="$opts" || die "$TIERFS $mnt -o size=$opts failed"
	wait_mounted "$mnt" || die "tierfs returned but $mnt is not mounted"
done
if [ -n "$NULLFS" ]; then
	"$NULLFS" "$NULLFS_MNT" || die "$NULLFS $NULLFS_MNT failed"
	wait_mounted "$NULLFS_MNT" || die "nullfs returned but $NULLFS_MNT is not mounted"
fi

if [ -z "$CREATELOOP" ]; then
	for cand in "$(dirname "$TIERFS")/bench/createloop" ./build/bench/createloop \
		"$(command -v createloop)"; do
		if [ -n "$cand" ] && [ -x "$cand" ]; then
			CREATELOOP=$cand
			break
		fi
	done
fi
if [ -z "$CREATELOOP" ]; then
	CREATELOOP=$SRC_MNT/createloop
	cc -O2 -o "$CREATELOOP" "$SCRIPT_DIR/createloop.c" ||
		die "no createloop binary and cc could not build one: pass --createloop"
fi
[ -x "$CREATELOOP" ] || die "$CREATELOOP is not an executable"

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
echo "# tierfs resident benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, commit $commit"
echo "# size-mb=$SIZE_MB files=$NR_FILES runtime=${RUNTIME}s quick=$QUICK repeat=$REPEAT fio-file=${FIO_MB}MiB" \
	"bs=4k ioengine=psync|mmap direct=0 invalidate=0 numjobs=1 mount-size=$MOUNT_SIZE;" \
	"the O_DIRECT rows direct=1, the 1M one bs=1m"
echo "# tierfs=$TIERFS createloop=$CREATELOOP"
echo "# tmpfs  mount: $(findmnt -no FSTYPE,OPTIONS "$TMPFS_MNT" 2>/dev/null)"
for t in $TRANSPORTS; do
	echo "# tierfs transport=$t mount: $(findmnt -no FSTYPE,OPTIONS "$WORK/tierfs_$t" 2>/dev/null)"
done
[ -z "$NULLFS" ] || echo "# nullfs mount: $(findmnt -no FSTYPE,OPTIONS "$NULLFS_MNT" 2>/dev/null)" \
	"($NULLFS: writes dropped, reads return zeros)"

# The dd source: 64 MiB of incompressible, fixed-seed data from fio, written
# again and again.  Zeros from /dev/zero would flatter a filesystem that
# detects same-filled pages, as tierfs's swap tier will; /dev/urandom as the
# source would time the random generator.  Every copy also costs a read of the
# source from a kernel tmpfs, the same for both filesystems, which pulls the
# ratio a little towards 1.
SRC_MB=64
SRC=$SRC_MNT/random
fio --name=source --filename="$SRC" --rw=write --bs=1M --size="${SRC_MB}m" \
	--refill_buffers --randseed=1 --minimal >/dev/null 2>>"$LOG" ||
	die "fio could not write the source file: $(cat "$LOG")"

# write_source FILE: writes SIZE_MB of the source into FILE with dd bs=1M and
# fsyncs it, so that a tierfs with the writeback cache counts the write-back
# to its daemon.
write_source()
{
	local off=0 count

	while [ "$off" -lt "$SIZE_MB" ]; do
		count=$((SIZE_MB - off < SRC_MB ? SIZE_MB - off : SRC_MB))
		dd if="$SRC" of="$1" bs=1M count="$count" seek="$off" conv=notrunc \
			status=none 2>>"$LOG" || return 1
		off=$((off + count))
	done
	sync "$1" 2>>"$LOG"
}

# seq_write MNT: prints the best MiB/s of REPEAT runs of write_source, and
# leaves the file for cached_read.  Best-of because a single run also pays
# for whatever else the machine does (and, in a virtual machine, the first
# touch of guest memory by the host can cost more than the write itself).
seq_write()
{
	local file=$1/seq start end best=0

	for _ in $(seq "$REPEAT"); do
		rm -f "$file"
		start=$(now_ns)
		write_source "$file" || return 1
		end=$(now_ns)
		best=$(awk -v mb="$SIZE_MB" -v ns=$((end - start)) -v best="$best" \
			'BEGIN { v = mb / (ns / 1e9); printf "%.0f\n", (v > best ? v : best) }')
	done
	echo "$best"
}

# cached_read MNT: reads the file that seq_write wrote with dd bs=1M, once
# untimed and then REPEAT times, prints the best MiB/s and removes the file.
cached_read()
{
	local file=$1/seq start end best=0

	dd if="$file" of=/dev/null bs=1M status=none 2>>"$LOG" || return 1
	for _ in $(seq "$REPEAT"); do
		start=$(now_ns)
		dd if="$file" of=/dev/null bs=1M status=none 2>>"$LOG" || return 1
		end=$(now_ns)
		best=$(awk -v mb="$SIZE_MB" -v ns=$((end - start)) -v best="$best" \
			'BEGIN { v = mb / (ns / 1e9); printf "%.0f\n", (v > best ? v : best) }')
	done
	rm -f "$file"
	echo "$best"
}

# fio_job MNT RW IOENGINE [BS [DIRECT]]: one job of BS (4k) on a FIO_MB file
# for RUNTIME seconds, buffered unless DIRECT is 1, without cache
# invalidation; prints IOPS, or MiB/s for a BS of 1m (terse format v3: read
# bandwidth and IOPS are fields 7 and 8, write fields 48 and 49).  The first
# job lays the file out with writes, untimed, and nothing reads it before the
# clock starts: the data is resident in the filesystem, not necessarily in
# the kernel's page cache over a tierfs, as after any write.
fio_job()
{
	local out field bs=${4:-4k} direct=${5:-0} div=1

	out=$(fio --name="$2-$3" --filename="$1/fio.dat" --size="${FIO_MB}m" --bs="$bs" \
		--rw="$2" --ioengine="$3" --direct="$direct" --invalidate=0 --numjobs=1 \
		--runtime="$RUNTIME" --time_based --randseed=1 --minimal 2>>"$LOG") || return 1
	case "$2" in
	*write) field=49 ;;
	*) field=8 ;;
	esac
	[ "$bs" = 1m ] && { field=$((field - 1)); div=1024; }
	printf '%s\n' "$out" | awk -F';' -v f="$field" -v d="$div" '
		$1 == "3" { if ($5 != 0) exit 1; print int($f / d); found = 1 }
		END { exit !found }'
}

# meta MNT: runs createloop REPEAT times in a fresh directory and prints the
# best "create stat unlink all" rates in ops/s.
meta()
{
	local dir=$1/createloop

	for _ in $(seq "$REPEAT"); do
		mkdir "$dir" 2>>"$LOG" || return 1
		"$CREATELOOP" "$dir" "$NR_FILES" 2>>"$LOG" || return 1
		rmdir "$dir" 2>>"$LOG" || return 1
	done | awk '$2 > v[$1] { v[$1] = $2 }
		END { print v["create"] + 0, v["stat"] + 0, v["unlink"] + 0, v["all"] + 0 }'
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

declare -A RESULT

# measure KEY FUNCTION ARGS...: runs FUNCTION on tmpfs, then on tierfs (then
# on nullfs).
measure()
{
	local key=$1 fs mnt value
	shift

	for fs in $FILESYSTEMS; do
		case "$fs" in
		tmpfs) mnt=$TMPFS_MNT ;;
		nullfs) mnt=$NULLFS_MNT ;;
		*) mnt=$WORK/$fs ;;
		esac
		echo "resident.sh: $key on $fs" >&2
		value=$("$@" "$mnt") || die "$key on $fs failed: $(cat "$LOG")"
		RESULT[$key.$fs]=$value
	done
}

fio_randread() { fio_job "$1" randread psync; }
# The same after one sequential pass: the data is in the kernel's page cache
# over tierfs too, as it is after any read (fio's layout drops it with
# fadvise(DONTNEED), so the cold row above pays a FUSE request per read).
fio_randread_warm()
{
	dd if="$1/fio.dat" of=/dev/null bs=1M 2>>"$LOG" || return 1
	fio_job "$1" randread psync
}
fio_randwrite() { fio_job "$1" randwrite psync; }
# O_DIRECT: every read is a request, whatever the page cache holds.
fio_direct_randread() { fio_job "$1" randread psync 4k 1; }
fio_direct_read() { fio_job "$1" read psync 1m 1; }
fio_mmap_randread() { fio_job "$1" randread mmap; }

measure seqwrite seq_write
measure seqread cached_read
measure randread fio_randread
measure randread_warm fio_randread_warm
measure randwrite fio_randwrite
# tmpfs takes O_DIRECT from Linux 6.6 on.
HAS_DIRECT=0
dd if=/dev/zero of="$TMPFS_MNT/direct" bs=4k count=1 oflag=direct status=none 2>/dev/null &&
	HAS_DIRECT=1
rm -f "$TMPFS_MNT/direct"
if [ "$HAS_DIRECT" = 1 ]; then
	measure drandread fio_direct_randread
	measure dread fio_direct_read
else
	echo "# tmpfs refuses O_DIRECT here: no O_DIRECT rows"
fi
measure mmapread fio_mmap_randread
rm -f "$TMPFS_MNT/fio.dat" "$WORK"/tierfs_*/fio.dat "$NULLFS_MNT/fio.dat"
measure meta meta

for fs in $FILESYSTEMS; do
	read -r c s u a <<<"${RESULT[meta.$fs]}"
	RESULT[create.$fs]=$c
	RESULT[stat.$fs]=$s
	RESULT[unlink.$fs]=$u
	RESULT[csu.$fs]=$a
done

# row KEY LABEL UNIT TARGET: the main tierfs (the last transport) against
# tmpfs, the other transports and nullfs, on stdout and as records.
row()
{
	local key=$1 label=$2 unit=$3 target=$4 fs line value ratio main=${RESULT[$1.$MAIN]}

	line=$(printf '%-26s' "$label")
	for fs in $FILESYSTEMS; do
		value=${RESULT[$key.$fs]}
		line="$line | $(printf '%10s' "$value")"
		[ "$fs" = "$MAIN" ] && continue
		ratio=$(awk -v a="$value" -v b="$main" 'BEGIN { printf "%5.2f", (a > 0 ? b / a : 0) }')
		line="$line $ratio"
		[ -z "$RESULTS" ] || result "$label" "$unit" "$main" "$(anchor_name "$fs")" "$value"
	done
	if [ -n "$target" ]; then
		line="$line | $(awk -v a="${RESULT[$key.tmpfs]}" -v b="$main" -v t="$target" \
			'BEGIN { r = a > 0 ? b / a : 0; printf ">= %.2f %s", t, (r >= t ? "ok" : "BELOW") }')"
	fi
	echo "$line $unit"
}

# The column name of a filesystem in the report.
anchor_name()
{
	case "$1" in
	tmpfs) echo "kernel tmpfs" ;;
	nullfs) echo nullfs ;;
	*) echo "tierfs transport=${1#tierfs_}" ;;
	esac
}

[ -z "$RESULTS" ] || results_put subject "tierfs transport=${MAIN#tierfs_}"
header=$(printf '%-26s' test)
for fs in $FILESYSTEMS; do
	if [ "$fs" = "$MAIN" ]; then
		header="$header | $(printf '%10s' "${fs#tierfs_}")"
	else
		header="$header | $(printf '%10s %5s' "${fs#tierfs_}" x)"
	fi
done
echo "$header | target (vs tmpfs)"
echo "# x: ${MAIN#tierfs_} / that column"

row seqwrite "seq write 1M (dd+fsync)*" MiB/s 0.5
row seqread "cached seq read 1M (dd)*" MiB/s 0.8
row randread "4K randread psync, cold" IOPS 0.5
row randread_warm "4K randread psync, warm" IOPS 0.5
row randwrite "4K randwrite psync" IOPS ""
if [ "$HAS_DIRECT" = 1 ]; then
	row drandread "4K randread O_DIRECT" IOPS ""
	row dread "1M read O_DIRECT" MiB/s ""
fi
row mmapread "4K randread mmap" IOPS ""
row create "create*" ops/s ""
row stat "stat*" ops/s ""
row unlink "unlink*" ops/s ""
row csu "create/stat/unlink*" ops/s 0.2
echo "* best of $REPEAT runs"
param "dd" "seq write ${SIZE_MB} MiB bs=1M from a ${SRC_MB} MiB incompressible source, + fsync;" \
	"cached read bs=1M; best of $REPEAT"
param "fio" "bs=4k ${RUNTIME}s numjobs=1 direct=0 invalidate=0 randseed=1, ${FIO_MB} MiB file;" \
	"cold: after fio's layout (fadvise DONTNEED), warm: after one dd pass;" \
	"O_DIRECT rows direct=1, the 1M one bs=1m"
param "createloop" "$NR_FILES empty files in one directory: create, stat, unlink; best of $REPEAT"
param "mounts" "tmpfs size=$MOUNT_SIZE; tierfs size=$MOUNT_SIZE,transport=T for T in $TRANSPORTS (defaults: cache=auto, mem=, backend=zpool); the tierfs column is transport=${MAIN#tierfs_}"
[ -z "$NULLFS" ] ||
	param "nullfs" "bench/nullfs.c with the FUSE settings of tierfs: writes dropped, reads zeros"
note "* best of $REPEAT runs."
exit 0
