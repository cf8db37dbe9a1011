#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Drain against swapoff: how long does tierctl drain take to bring every
# swapped page of a mount back, against the kernel's swapoff of the same
# data?  tierfs: a mount with mem= gets N MiB of half-compressible data,
# everything is evicted (tierctl reclaim all), the budget is raised (tierctl
# set mem=) and tierctl drain is timed, for each backend.  Kernel: the same
# data in a tmpfs file written from a cgroup v1 memory cgroup limited to the
# same mem=, pushed out with memory.force_empty to a zram swap device (lz4)
# and to a swap file, the limit lifted, and swapoff timed.  Pairs: zpool and
# ramdisk against zram, the file backend against the swap file.  Prints
# times, MiB/s and swapoff time / drain time (>= 1: tierfs at least as
# fast); --results FILE also writes them for bench/run.
#
# Exit status: 0 done (nothing is enforced), 1 a step failed, a drain left
# pages stored or data read back differs, 2 usage, 77 skipped (not root,
# /dev/fuse unusable, no fio, no cgroup v1 memory controller, no zram).

# Functions run from traps look unreachable to shellcheck.
# shellcheck disable=SC2317

set -u

usage()
{
	cat <<'EOF'
usage: drain.sh [--tierfs PATH] [--tierctl PATH] [--size-mb N] [--mem-mb N]
                [--backends LIST] [--swap-dir DIR] [--compress PCT] [--quick]
                [--results FILE]

  --tierfs PATH    tierfs binary (default: ./build/tierfs, else tierfs in PATH)
  --tierctl PATH   tierctl binary (default: next to tierfs, else tierctl in PATH)
  --size-mb N      data written, evicted and drained, MiB (1024)
  --mem-mb N       tierfs mem= while writing, and the kernel cgroup's
                   memory.limit_in_bytes, MiB (64)
  --backends LIST  comma-separated, of zpool, ramdisk, file (all three);
                   zpool and ramdisk are compared with swapoff of zram, file
                   with swapoff of a swap file; one that tierfs has not
                   built in is left out, with a note
  --swap-dir DIR   where both swap files go (/var/tmp)
  --compress PCT   fio --buffer_compress_percentage of the data (50)
  --quick          --size-mb 64 (smoke test)
  --results FILE   append TSV records for bench/run (see bench/run)

Must run as root: it mounts, creates a memory cgroup, a zram swap device and
a swap file.  Swap devices already on the machine are left alone (and named
in the header); everything created is removed on exit, Ctrl-C included.
EOF
}

TIERFS=
TIERCTL=
SIZE_MB=1024
MEM_MB=64
BACKENDS=zpool,ramdisk,file
SWAP_DIR=/var/tmp
COMPRESS=50
QUICK=0
RESULTS=

while [ $# -gt 0 ]; do
	case "$1" in
	--tierfs) TIERFS=${2-}; shift ;;
	--tierctl) TIERCTL=${2-}; shift ;;
	--size-mb) SIZE_MB=${2-}; shift ;;
	--mem-mb) MEM_MB=${2-}; shift ;;
	--backends) BACKENDS=${2-}; shift ;;
	--swap-dir) SWAP_DIR=${2-}; shift ;;
	--compress) COMPRESS=${2-}; shift ;;
	--quick) QUICK=1; SIZE_MB=64 ;;
	--results) RESULTS=${2-}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "drain.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

NAME=drain.sh
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
want_positive "$SIZE_MB" "$MEM_MB"
want_percent --compress "$COMPRESS"
IFS=, read -r -a BACKEND_LIST <<<"$BACKENDS"
[ "${#BACKEND_LIST[@]}" -gt 0 ] || { echo "drain.sh: --backends is empty" >&2; exit 2; }
for b in "${BACKEND_LIST[@]}"; do
	case "$b" in
	zpool|ramdisk|file) ;;
	*) echo "drain.sh: unknown backend '$b'" >&2; exit 2 ;;
	esac
done
[ -d "$SWAP_DIR" ] || { echo "drain.sh: --swap-dir $SWAP_DIR is not a directory" >&2; exit 2; }

[ -z "$RESULTS" ] || : >>"$RESULTS" || { echo "$NAME: cannot write $RESULTS" >&2; exit 2; }
require_mount_bench fio dd fusermount3 mkswap swapon swapoff findmnt md5sum flock fallocate
require_memcg_v1
require_zram
find_tierfs
find_tierctl
only_built_backends
# No other zram benchmark at the same time: its cgroup would swap to our
# devices (priority 32767) and our swapoff would read its pages too.
zram_lock $((QUICK ? 240 : 3000))

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SWAP_DIR=$(cd "$SWAP_DIR" && pwd)
# Room for the data and slack: the mounts, tierfs's swapsize, the swap devices.
FS_MB=$((SIZE_MB + 64))
# The budget the drain gets: the data and a quarter more, so that the
# reclaim thread (above 15/16 of mem=) leaves it all resident afterwards.
DRAIN_MEM_MB=$((SIZE_MB + SIZE_MB / 4 + 64))

WORK=$(mktemp -d /tmp/tierfs-drain.XXXXXX) || die "mktemp failed"
TIERFS_MNT=$WORK/tierfs
TMPFS_MNT=$WORK/tmpfs
LOG=$WORK/log
# tierfs's file backend: an unnamed (O_TMPFILE) file in this path's directory.
TIERFS_SWAP=$SWAP_DIR/tierfs-drain.$$.backend
# The kernel's swap file.
KERNEL_SWAP=$SWAP_DIR/tierfs-drain.$$.swap
KERNEL_SWAP_ON=0
CG_BASE=$CG_ROOT/tierfs-bench-drain.$$
CG=
DAEMON_PID=

tierfs_failed() { die_daemon "$1" "$DAEMON_PID" "$LOG"; }

unmount_tierfs()
{
	unmount_daemon "$TIERFS_MNT" "$DAEMON_PID"
	DAEMON_PID=
}

# is_swap DEV: DEV is an active swap device or file.
is_swap()
{
	awk -v d="$1" '$1 == d { found = 1 } END { exit !found }' /proc/swaps
}

# swapfile_off: swapoff and remove the kernel's swap file.
swapfile_off()
{
	if [ "$KERNEL_SWAP_ON" = 1 ]; then
		if ! swapoff "$KERNEL_SWAP" 2>>"$LOG" && is_swap "$KERNEL_SWAP"; then
			echo "$NAME: swapoff $KERNEL_SWAP failed; it is still a swap file" >&2
			return 1
		fi
		KERNEL_SWAP_ON=0
	fi
	rm -f "$KERNEL_SWAP"
}

cleanup()
{
	unmount_tierfs
	# The tmpfs goes before the swap devices, so swapoff has nothing to read in.
	if is_mounted "$TMPFS_MNT"; then
		umount "$TMPFS_MNT" || umount -l "$TMPFS_MNT"
	fi
	# A swapoff interrupted by Ctrl-C may have finished all the same.
	[ -z "$ZRAM" ] || is_swap "/dev/$ZRAM" || ZRAM_SWAPON=0
	zram_off || echo "$NAME: /dev/$ZRAM left behind: swapoff it by hand" >&2
	swapfile_off || echo "$NAME: $KERNEL_SWAP left behind: swapoff it by hand" >&2
	cg_remove "$CG_BASE"
	rm -f "$TIERFS_SWAP" "$LOG" "$WORK"/stats.*
	cd / && rmdir "$TIERFS_MNT" "$TMPFS_MNT" "$WORK" 2>/dev/null
}
enter_work "$TIERFS_MNT" "$TMPFS_MNT"

declare -A R

# run CMD ARGS...: CMD in the kernel side's cgroup when there is one.
run()
{
	if [ -n "$CG" ]; then
		in_cg "$CG" "$@"
	else
		"$@" 9>&-
	fi
}

# write_data MNT: SIZE_MB of fixed-seed data, the same on every side.
write_data()
{
	run fio --name=w --filename="$1/data" --rw=write --bs=1M --size="${SIZE_MB}m" \
		--buffer_compress_percentage="$COMPRESS" --refill_buffers --randseed=1 \
		--ioengine=psync --fallocate=none --minimal >/dev/null 2>>"$LOG"
}

# md5_data MNT: the first 12 digits of the data's md5.
md5_data()
{
	run dd if="$1/data" bs=1M status=none 2>>"$LOG" | md5sum | cut -c1-12
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

# secs NS: nanoseconds as seconds.
secs()
{
	awk -v ns="$1" 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

# mib_per_s SECONDS: SIZE_MB over SECONDS.
mib_per_s()
{
	awk -v s="$1" -v mb="$SIZE_MB" 'BEGIN { if (s > 0) printf "%.0f\n", mb / s }'
}

mib()
{
	awk -v b="$1" 'BEGIN { printf "%.0f\n", b / 1048576 }'
}

# --- tierfs -------------------------------------------------------------------------

stats()
{
	"$TIERCTL" stats "$TIERFS_MNT" --json >"$WORK/stats.$1" 2>>"$LOG"
}

# evict_all: every resident page to the backend; one "reclaim all" can stop
# at a batch that only promotes pages in use, so it is repeated (up to 64
# times) until at most 1 MiB is resident.
evict_all()
{
	local resident

	for _ in $(seq 64); do
		"$TIERCTL" reclaim "$TIERFS_MNT" all >>"$LOG" 2>&1 || return 1
		stats evicted || return 1
		resident=$(json_num resident_bytes "$WORK/stats.evicted")
		[ "${resident:-0}" -gt 1048576 ] || return 0
	done
	echo "$NAME: 64 x reclaim all left $resident bytes resident" >>"$LOG"
	return 1
}

# tierfs_side BACKEND: write, evict all, raise mem=, time tierctl drain.
tierfs_side()
{
	local b=$1 backend_opt=$1 start end out pages mbps wall

	[ "$b" = file ] && backend_opt=file:$TIERFS_SWAP
	echo "$NAME: tierfs $b: mount, write ${SIZE_MB}MiB, reclaim all" >&2
	"$TIERFS" "$TIERFS_MNT" -f -o "size=${FS_MB}m,mem=${MEM_MB}m,cache=never,backend=$backend_opt,compressor=lz4,swapsize=${FS_MB}m" \
		2>>"$LOG" 9>&- &
	DAEMON_PID=$!
	wait_mounted "$TIERFS_MNT" "$DAEMON_PID" || tierfs_failed "tierfs $b did not mount"
	write_data "$TIERFS_MNT" || tierfs_failed "tierfs $b: writing failed"
	evict_all || tierfs_failed "tierfs $b: tierctl reclaim all failed"
	stats before || tierfs_failed "tierfs $b: tierctl stats failed"
	R[$b.stored]=$(mib "$(json_num stored_bytes "$WORK/stats.before")")
	R[$b.stored_pages]=$(json_num stored_pages "$WORK/stats.before")
	R[$b.pool]=$(mib "$(json_num pool_bytes "$WORK/stats.before")")
	R[$b.resident]=$(mib "$(json_num resident_bytes "$WORK/stats.before")")
	"$TIERCTL" set "$TIERFS_MNT" mem="${DRAIN_MEM_MB}m" >>"$LOG" 2>&1 ||
		tierfs_failed "tierfs $b: tierctl set mem=${DRAIN_MEM_MB}m failed"

	echo "$NAME: tierfs $b: tierctl drain (${R[$b.stored_pages]} pages stored)" >&2
	start=$(now_ns)
	out=$("$TIERCTL" drain "$TIERFS_MNT" 2>>"$LOG") ||
		tierfs_failed "tierfs $b: tierctl drain failed"
	end=$(now_ns)
	echo "$out" >>"$LOG"
	wall=$(secs $((end - start)))
	R[$b.wall]=$wall
	# "drain: P pages in S.s s, M MB/s, H already resident": the daemon's own
	# time, to the millisecond through M = P * 4096 * 1000 / elapsed_ms / 1e6
	# (the wall time adds tierctl's polling, every 200 ms).
	read -r pages mbps <<<"$(printf '%s\n' "$out" | awk '$1 == "drain:" { print $2, $7 }')"
	R[$b.drained]=${pages:-}
	R[$b.secs]=$(awk -v p="${pages:-0}" -v m="${mbps:-0}" -v w="$wall" \
		'BEGIN { if (p > 0 && m > 0) printf "%.3f\n", p * 4096 / (m * 1e6); else print w }')
	R[$b.mibs]=$(mib_per_s "${R[$b.secs]}")
	stats after || tierfs_failed "tierfs $b: tierctl stats failed"
	R[$b.stored_after]=$(json_num stored_pages "$WORK/stats.after")
	R[$b.resident_after]=$(mib "$(json_num resident_bytes "$WORK/stats.after")")
	R[$b.md5]=$(md5_data "$TIERFS_MNT") || tierfs_failed "tierfs $b: reading the data failed"
	unmount_tierfs
	[ "${R[$b.stored_after]}" = 0 ] ||
		tierfs_failed "tierfs $b: ${R[$b.stored_after]} pages still stored after the drain"
}

# --- kernel -------------------------------------------------------------------------

# swapfile_on: a swap file of FS_MB in SWAP_DIR at the highest priority.
swapfile_on()
{
	rm -f "$KERNEL_SWAP"
	(umask 077 && fallocate -l "${FS_MB}M" "$KERNEL_SWAP") 2>>"$LOG" ||
		die "cannot create $KERNEL_SWAP"
	mkswap "$KERNEL_SWAP" >>"$LOG" 2>&1 || die "mkswap $KERNEL_SWAP failed"
	if ! swapon -p 32767 "$KERNEL_SWAP" 2>>"$LOG"; then
		# A filesystem that refuses preallocated extents for swap: write it.
		rm -f "$KERNEL_SWAP"
		(umask 077 && dd if=/dev/zero of="$KERNEL_SWAP" bs=1M count="$FS_MB" \
			conv=fsync status=none) 2>>"$LOG" || die "cannot write $KERNEL_SWAP"
		mkswap "$KERNEL_SWAP" >>"$LOG" 2>&1 || die "mkswap $KERNEL_SWAP failed"
		swapon -p 32767 "$KERNEL_SWAP" 2>>"$LOG" || die "swapon $KERNEL_SWAP failed"
	fi
	KERNEL_SWAP_ON=1
}

# swap_used_kib DEV: the Used column of /proc/swaps for DEV.
swap_used_kib()
{
	awk -v d="$1" '$1 == d { print $4; found = 1 } END { if (!found) print 0 }' /proc/swaps
}

# kernel_side KIND (zram|swapfile): tmpfs data swapped out from a memory
# cgroup, the limit lifted, swapoff timed.
kernel_side()
{
	local kind=$1 dev start end

	echo "$NAME: kernel $kind: swap on, write ${SIZE_MB}MiB in a ${MEM_MB}MiB cgroup" >&2
	if [ "$kind" = zram ]; then
		zram_on $((FS_MB * 1024 * 1024))
		dev=/dev/$ZRAM
	else
		swapfile_on
		dev=$KERNEL_SWAP
	fi
	R[$kind.dev]=$dev
	CG=$(cg_new "$CG_BASE" "$MEM_MB") || die "cannot create memory cgroup $CG_BASE"
	mount -t tmpfs -o size="${FS_MB}m" tierfs-bench "$TMPFS_MNT" || die "tmpfs mount failed"
	write_data "$TMPFS_MNT" || die "kernel $kind: writing failed: $(tail -n 3 "$LOG")"
	# What the limit left resident goes out too, as tierctl reclaim all does.
	echo 0 >"$CG/memory.force_empty" 2>>"$LOG" || die "kernel $kind: memory.force_empty failed"
	[ "$(cg_oom_kills "$CG")" -eq 0 ] || die "kernel $kind: the writer was OOM-killed"
	R[$kind.swapped]=$(mib "$(cg_stat "$CG" swap)")
	R[$kind.resident]=$(mib "$(cg_stat "$CG" shmem)")
	R[$kind.dev_used]=$(($(swap_used_kib "$dev") / 1024))
	if [ "$kind" = zram ]; then
		R[zram.orig]=$(mib "$(zram_mm_stat 1)")
		R[zram.compr]=$(mib "$(zram_mm_stat 2)")
		R[zram.mem]=$(mib "$(zram_mm_stat 3)")
	fi
	echo -1 >"$CG/memory.limit_in_bytes" || die "kernel $kind: cannot lift the cgroup limit"

	echo "$NAME: kernel $kind: swapoff $dev (${R[$kind.dev_used]} MiB used)" >&2
	start=$(now_ns)
	swapoff "$dev" 2>>"$LOG" || die "kernel $kind: swapoff $dev failed: $(tail -n 3 "$LOG")"
	end=$(now_ns)
	if [ "$kind" = zram ]; then
		ZRAM_SWAPON=0
	else
		KERNEL_SWAP_ON=0
	fi
	R[$kind.secs]=$(secs $((end - start)))
	R[$kind.mibs]=$(mib_per_s "${R[$kind.secs]}")
	R[$kind.swap_after]=$(mib "$(cg_stat "$CG" swap)")
	R[$kind.resident_after]=$(mib "$(cg_stat "$CG" shmem)")
	R[$kind.md5]=$(md5_data "$TMPFS_MNT") || die "kernel $kind: reading the data failed"
	umount "$TMPFS_MNT" || die "umount $TMPFS_MNT failed"
	if [ "$kind" = zram ]; then
		zram_off || die "cannot remove /dev/$ZRAM"
	else
		swapfile_off || die "cannot remove $KERNEL_SWAP"
	fi
	cg_remove "$CG"
	CG=
}

commit=$(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null) || commit=unknown
other_swap=$(awk 'NR > 1 { printf "%s%s", sep, $1; sep = "," }' /proc/swaps)
echo "# tierfs drain benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r)," \
	"$(nproc) CPUs, commit $commit; quick=$QUICK"
echo "# data: ${SIZE_MB}MiB, fio write bs=1M psync buffer_compress_percentage=$COMPRESS" \
	"refill_buffers randseed=1"
echo "# tierfs: size=${FS_MB}m mem=${MEM_MB}m cache=never compressor=lz4 swapsize=${FS_MB}m;" \
	"tierctl reclaim all; tierctl set mem=${DRAIN_MEM_MB}m; tierctl drain timed (daemon's" \
	"elapsed time, and the wall time of tierctl, which polls every 200 ms)"
echo "# kernel: tmpfs size=${FS_MB}m written from a cgroup v1 memory cgroup limit ${MEM_MB}MiB" \
	"swappiness=100, memory.force_empty, limit lifted, swapoff timed; zram lz4" \
	"disksize=${FS_MB}MiB, swap file ${FS_MB}MiB in $SWAP_DIR (fallocate), priority 32767"
echo "# other swap on the machine: ${other_swap:-none}; tierfs=$TIERFS"

START=$(now_ns)
KINDS=()
for b in "${BACKEND_LIST[@]}"; do
	tierfs_side "$b"
	case "$b" in
	zpool|ramdisk) kind=zram ;;
	file) kind=swapfile ;;
	esac
	# Each kernel anchor once, right after the first backend it anchors.
	if [ -z "${R[$kind.secs]-}" ]; then
		kernel_side "$kind"
		KINDS+=("$kind")
	fi
	R[$b.anchor]=$kind
done
TOTAL_SECS=$(( ($(now_ns) - START) / 1000000000 ))

# --- report -------------------------------------------------------------------------

declare -A ANCHOR_LABEL=([zram]="swapoff zram" [swapfile]="swapoff swap file")
status=0
MD5_FIRST=${R[${BACKEND_LIST[0]}.md5]}

# speedup A B: A / B with two decimals, or "-".
speedup()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f\n", a / b; else print "-" }'
}

echo
printf '%-8s %9s %8s %8s %8s | %-17s %9s %8s %8s | %8s %8s\n' backend "swapped" "drain s" \
	"MiB/s" "wall s" "kernel" "swapped" "swapoff" "MiB/s" "ratio" "ratio wl"
for b in "${BACKEND_LIST[@]}"; do
	kind=${R[$b.anchor]}
	printf '%-8s %9s %8s %8s %8s | %-17s %9s %8s %8s | %8s %8s\n' "$b" \
		"${R[$b.stored]}MiB" "${R[$b.secs]}" "${R[$b.mibs]}" "${R[$b.wall]}" \
		"${ANCHOR_LABEL[$kind]}" "${R[$kind.dev_used]}MiB" "${R[$kind.secs]}" \
		"${R[$kind.mibs]}" "$(speedup "${R[$kind.secs]}" "${R[$b.secs]}")" \
		"$(speedup "${R[$kind.secs]}" "${R[$b.wall]}")"
done
echo
echo "ratio: swapoff time / drain time (the daemon's elapsed time); ratio wl: against the" \
	"wall time of tierctl drain (includes its 200 ms polling). >= 1.00: tierfs at least as fast."
echo "MiB/s: ${SIZE_MB} MiB / time."
for b in "${BACKEND_LIST[@]}"; do
	echo "tierfs $b: before the drain ${R[$b.stored_pages]} pages stored (${R[$b.stored]} MiB," \
		"pool ${R[$b.pool]} MiB), ${R[$b.resident]} MiB resident; drained ${R[$b.drained]:-?}" \
		"pages; after: stored_pages ${R[$b.stored_after]}, ${R[$b.resident_after]} MiB resident;" \
		"md5 ${R[$b.md5]}"
done
for kind in "${KINDS[@]}"; do
	echo "kernel $kind (${R[$kind.dev]}): before swapoff memory.stat swap ${R[$kind.swapped]} MiB," \
		"shmem ${R[$kind.resident]} MiB, /proc/swaps used ${R[$kind.dev_used]} MiB$(
		[ "$kind" = zram ] && echo ", zram orig_data_size ${R[zram.orig]} MiB compr_data_size" \
			"${R[zram.compr]} MiB mem_used_total ${R[zram.mem]} MiB"); after: swap" \
		"${R[$kind.swap_after]} MiB, shmem ${R[$kind.resident_after]} MiB; md5 ${R[$kind.md5]}"
done
echo "Total time ${TOTAL_SECS} s."

# Checks: the same bytes everywhere, and the kernel really swapped the data.
for k in "${BACKEND_LIST[@]}" "${KINDS[@]}"; do
	if [ "${R[$k.md5]}" != "$MD5_FIRST" ]; then
		echo "$NAME: $k read back other data (md5 ${R[$k.md5]}, not $MD5_FIRST)" >&2
		status=1
	fi
done
for kind in "${KINDS[@]}"; do
	if [ "${R[$kind.dev_used]}" -lt $((SIZE_MB * 9 / 10)) ]; then
		echo "$NAME: warning: the kernel swapped only ${R[$kind.dev_used]} MiB of ${SIZE_MB}" \
			"to ${R[$kind.dev]}: its swapoff had less to do" >&2
		note "Warning: the kernel swapped only ${R[$kind.dev_used]} MiB of ${SIZE_MB} MiB to" \
			"${R[$kind.dev]}; its swapoff had less to do than the drain."
	fi
done

# --- results for bench/run -------------------------------------------------------

if [ -n "$RESULTS" ]; then
	for b in "${BACKEND_LIST[@]}"; do
		kind=${R[$b.anchor]}
		result "$b: drain throughput (daemon's time)" MiB/s "${R[$b.mibs]}" \
			"${ANCHOR_LABEL[$kind]}" "${R[$kind.mibs]}"
		result "$b: drain time (daemon's time)" s "${R[$b.secs]}" \
			"${ANCHOR_LABEL[$kind]}" "${R[$kind.secs]}"
		result "$b: tierctl drain wall time" s "${R[$b.wall]}" \
			"${ANCHOR_LABEL[$kind]}" "${R[$kind.secs]}"
	done
	note "tierfs / swapoff of MiB/s is swapoff time / drain time: at least 1 means tierfs" \
		"drains at least as fast. The daemon's time is the drain's own elapsed time; the wall" \
		"time of tierctl drain adds its polling (every 200 ms)."
	for b in "${BACKEND_LIST[@]}"; do
		note "tierfs $b: ${R[$b.stored]} MiB stored before the drain (pool ${R[$b.pool]} MiB)," \
			"stored_pages ${R[$b.stored_after]} after; md5 ${R[$b.md5]}."
	done
	for kind in "${KINDS[@]}"; do
		note "kernel $kind: ${R[$kind.dev_used]} MiB on ${R[$kind.dev]} before swapoff" \
			"(memory.stat swap ${R[$kind.swapped]} MiB, shmem ${R[$kind.resident]} MiB$(
			[ "$kind" = zram ] && echo ", zram orig ${R[zram.orig]} MiB compressed" \
				"${R[zram.compr]} MiB")); md5 ${R[$kind.md5]}."
	done
	[ "${R[ramdisk.anchor]-}" != zram ] ||
		note "ramdisk holds pages uncompressed, zram compressed: that pair compares a copy with a decompression."
	param data "${SIZE_MB} MiB, fio buffer_compress_percentage=$COMPRESS refill_buffers randseed=1"
	param tierfs "mem=${MEM_MB}m cache=never compressor=lz4 swapsize=${FS_MB}m; tierctl reclaim all; tierctl set mem=${DRAIN_MEM_MB}m; tierctl drain"
	param kernel "tmpfs written from a cgroup v1 memory cgroup limited to ${MEM_MB} MiB, memory.force_empty, limit lifted, swapoff; zram lz4 disksize=${FS_MB}MiB; swap file ${FS_MB} MiB in $SWAP_DIR"
fi
exit "$status"
