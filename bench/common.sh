# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shared by the bench scripts (sourced, with NAME set to the script's name):
# skip (exit 77) and die (exit 1), the checks every mount benchmark needs,
# finding the binaries and the backends tierfs has built in, the zram swap
# device and the cgroup v1 memory controller of the pressure benchmarks, and
# the --results TSV records that bench/run turns into its report (the format
# is described in bench/run).

# These functions are called from the sourcing scripts only.
# shellcheck disable=SC2317

# skip REASON: exit 77, and say why in the --results file too.
skip()
{
	echo "$NAME: skipped: $*" >&2
	results_put skip "$*"
	exit 77
}

die()
{
	echo "$NAME: $*" >&2
	exit 1
}

# Root, a usable /dev/fuse, and the given tools, or skip.
require_mount_bench()
{
	local tool

	[ "$(id -u)" -eq 0 ] || skip "must run as root"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	{ : 3<>/dev/fuse; } 2>/dev/null || skip "/dev/fuse cannot be opened"
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
	done
}

# enter_work MOUNTPOINT...: the sourcing script's cleanup runs on exit, and
# INT and TERM exit 130 and 143; the mount points are made, WORK entered
# (fio drops files into its working directory) and LOG started empty.
enter_work()
{
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	mkdir "$@" || die "mkdir $* failed"
	cd "$WORK" || die "cd $WORK failed"
	: >"$LOG"
}

# want_positive VALUE...: each a positive integer, or a usage error (exit 2).
want_positive()
{
	local num

	for num in "$@"; do
		case "$num" in
		''|*[!0-9]*|0) echo "$NAME: '$num' is not a positive integer" >&2; exit 2 ;;
		esac
	done
}

# want_percent OPTION VALUE: 0 to 100, or a usage error (exit 2).
want_percent()
{
	case "$2" in
	''|*[!0-9]*) ;;
	*) [ "$2" -le 100 ] && return 0 ;;
	esac
	echo "$NAME: $1 wants 0..100" >&2
	exit 2
}

now_ns()
{
	date +%s%N
}

is_mounted()
{
	findmnt -rn --mountpoint "$1" >/dev/null 2>&1
}

abs_path()
{
	echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

# find_tierfs: sets TIERFS (if empty) to ./build/tierfs or tierfs in PATH,
# absolute, or dies.
find_tierfs()
{
	if [ -z "$TIERFS" ]; then
		if [ -x ./build/tierfs ]; then
			TIERFS=./build/tierfs
		else
			TIERFS=$(command -v tierfs) || die "no tierfs binary: build it or pass --tierfs"
		fi
	fi
	[ -x "$TIERFS" ] || die "$TIERFS is not an executable"
	TIERFS=$(abs_path "$TIERFS")
}

# has_backend NAME: whether TIERFS has backend NAME built in, as its --help
# lists them ("built in: backend=zpool ramdisk file; compressor=...").
has_backend()
{
	local list

	list=$("$TIERFS" --help 2>&1 | sed -n 's/^built in: backend=\([^;]*\);.*/\1/p')
	[ -n "$list" ] || die "$TIERFS --help lists no backend built in"
	[[ " $list " == *" $1 "* ]]
}

# require_backend BACKEND: skip unless TIERFS has BACKEND (a backend= value:
# zpool, ramdisk, file:PATH, or a chain zpool+file:PATH) built in.
require_backend()
{
	local tier

	for tier in ${1//+/ }; do
		has_backend "${tier%%:*}" || skip "backend=${tier%%:*} not built into $TIERFS"
	done
}

# only_built_backends: drops from BACKEND_LIST each backend that TIERFS does
# not have built in, saying so on stderr and in a note; skips if none is left.
only_built_backends()
{
	local b kept=()

	for b in "${BACKEND_LIST[@]}"; do
		if has_backend "$b"; then
			kept+=("$b")
		else
			echo "$NAME: backend=$b skipped: not built in" >&2
			note "backend=$b not measured: not built into $TIERFS"
		fi
	done
	[ "${#kept[@]}" -gt 0 ] || skip "no backend of ${BACKEND_LIST[*]} built into $TIERFS"
	BACKEND_LIST=("${kept[@]}")
}

# find_tierctl: sets TIERCTL (if empty) to the tierctl next to TIERFS, or
# tierctl in PATH, absolute, or dies.
find_tierctl()
{
	if [ -z "$TIERCTL" ]; then
		if [ -x "$(dirname "$TIERFS")/tierctl" ]; then
			TIERCTL=$(dirname "$TIERFS")/tierctl
		else
			TIERCTL=$(command -v tierctl) || die "no tierctl binary: pass --tierctl"
		fi
	fi
	[ -x "$TIERCTL" ] || die "$TIERCTL is not an executable"
	TIERCTL=$(abs_path "$TIERCTL")
}

# transport_opts T: tierfs's options for a bench's transport T: classic,
# uring, auto, or uring-nopoll (the ring with its threads never polling).
transport_opts()
{
	case "$1" in
	uring-nopoll) echo "transport=uring,ring_poll=0" ;;
	*) echo "transport=$1" ;;
	esac
}

# wait_mounted MNT PID: waits up to 10 s for MNT to be mounted while PID
# (the daemon, or empty) lives; fails if it is not.
wait_mounted()
{
	for _ in $(seq 100); do
		is_mounted "$1" && return 0
		[ -z "${2-}" ] || kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	is_mounted "$1"
}

# unmount_daemon MNT PID: unmount a FUSE mount, give its daemon (PID, may be
# empty) 30 s to exit, then kill it.  Returns the daemon's exit status (0 without one).
unmount_daemon()
{
	if is_mounted "$1"; then
		fusermount3 -u "$1" 2>/dev/null || umount "$1" 2>/dev/null || umount -l "$1"
	fi
	[ -n "${2-}" ] || return 0
	for _ in $(seq 300); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	kill "$2" 2>/dev/null && echo "$NAME: daemon $2 still ran 30 s after the unmount" >&2
	wait "$2" 2>/dev/null
	local rc=$?
	case $rc in 0|127) ;; *) echo "$NAME: daemon $2 exited with status $rc" >&2 ;; esac
	return "$rc"
}

# die_daemon WHAT PID LOG: die saying what failed, whether the daemon PID
# still runs, and the last lines of LOG (tierctl's and the daemon's stderr).
die_daemon()
{
	local state=running

	kill -0 "$2" 2>/dev/null || state=gone
	die "$1 (daemon $state): $(tail -n 5 "$3" | tr '\n' ' ')"
}

# json_num KEY FILE: the first number stored under "KEY" in tierctl's JSON.
json_num()
{
	grep -o "\"$1\":[0-9.]*" "$2" | head -n 1 | cut -d: -f2
}

# --- results: TSV records for bench/run ------------------------------------

# RESULTS is the --results file, or empty for none.  Tabs and newlines in a
# field become spaces.
results_put()
{
	local IFS=$'\t' field out=()

	[ -n "${RESULTS-}" ] || return 0
	for field in "$@"; do
		field=${field//$'\t'/ }
		out+=("${field//$'\n'/ }")
	done
	echo "${out[*]}" >>"$RESULTS"
}

# result METRIC UNIT TIERFS ANCHOR-NAME ANCHOR: one table cell pair; an empty
# value means "not measured" (never a made-up number).
result() { results_put result "$@"; }
# param KEY VALUE..., note TEXT..., outcome TEXT... (the words joined by spaces)
param() { results_put param "$1" "${*:2}"; }
note() { results_put note "$*"; }
outcome() { results_put outcome "$*"; }
# plot NAME STYLE TITLE XLABEL YLABEL, point NAME SERIES X Y
plot() { results_put plot "$@"; }
point() { results_put point "$@"; }

# --- cgroup v1 memory controller and zram swap -----------------------------

CG_ROOT=/sys/fs/cgroup/memory

# require_memcg_v1: skip without a writable cgroup v1 memory controller.
require_memcg_v1()
{
	if [ ! -w "$CG_ROOT/cgroup.procs" ] || [ ! -e "$CG_ROOT/memory.oom_control" ]; then
		skip "no cgroup v1 memory controller at $CG_ROOT"
	fi
}

# require_zram: skip without zram (loads the module when it can).
require_zram()
{
	if [ ! -e /sys/class/zram-control ] && [ ! -e /sys/block/zram0 ]; then
		modprobe zram num_devices=1 2>/dev/null ||
			skip "no zram (modprobe zram failed)"
	fi
	[ -e /sys/class/zram-control ] || [ -e /sys/block/zram0 ] || skip "no zram"
}

# zram_lock: one zram benchmark at a time on the machine: a second run's
# zram swap would take the first run's pages, and its swapoff would then fail
# against that cgroup.  Holds fd 9 until the script exits.
zram_lock()
{
	local lock=/run/tierfs-bench-pressure.lock

	exec 9>"$lock" || skip "cannot open $lock"
	if ! flock -n 9; then
		echo "$NAME: waiting for another zram benchmark ($lock)" >&2
		flock -w "${1:-3000}" 9 || skip "another zram benchmark holds $lock"
	fi
}

# zram_on BYTES: a zram swap device of BYTES (disksize), lz4, at the highest
# priority; sets ZRAM (zram<N>), ZRAM_HOT_ADDED and ZRAM_SWAPON, logs to LOG.
ZRAM=
ZRAM_HOT_ADDED=0
ZRAM_SWAPON=0
zram_on()
{
	local dev

	if [ -w /sys/class/zram-control/hot_add ]; then
		ZRAM=zram$(cat /sys/class/zram-control/hot_add) || die "zram hot_add failed"
		ZRAM_HOT_ADDED=1
	else
		for dev in /sys/block/zram*; do
			[ "$(cat "$dev/disksize")" = 0 ] || continue
			ZRAM=${dev##*/}
			break
		done
		[ -n "$ZRAM" ] || skip "no free zram device and no zram-control/hot_add"
	fi
	grep -qw lz4 "/sys/block/$ZRAM/comp_algorithm" || skip "zram has no lz4"
	echo lz4 >"/sys/block/$ZRAM/comp_algorithm" || die "cannot set $ZRAM comp_algorithm"
	echo "$1" >"/sys/block/$ZRAM/disksize" || die "cannot set $ZRAM disksize"
	mkswap "/dev/$ZRAM" >>"$LOG" 2>&1 || die "mkswap /dev/$ZRAM failed"
	swapon -p 32767 "/dev/$ZRAM" 2>>"$LOG" || die "swapon /dev/$ZRAM failed"
	ZRAM_SWAPON=1
}

# zram_off: swapoff, reset and remove the zram device; fails (and says so)
# if the swap device is still on.
zram_off()
{
	[ -n "$ZRAM" ] || return 0
	# A drain may have swapped it off already, in a subshell that could not say so.
	if [ "$ZRAM_SWAPON" = 1 ] && grep -q "^/dev/$ZRAM " /proc/swaps; then
		if ! swapoff "/dev/$ZRAM" 2>>"$LOG"; then
			echo "$NAME: swapoff /dev/$ZRAM failed; it is still a swap device" >&2
			return 1
		fi
		ZRAM_SWAPON=0
	fi
	echo 1 >"/sys/block/$ZRAM/reset" 2>/dev/null
	if [ "$ZRAM_HOT_ADDED" = 1 ]; then
		echo "${ZRAM#zram}" >/sys/class/zram-control/hot_remove 2>/dev/null
	fi
	ZRAM=
}

# zswap_on BYTES DIR [PCT]: a swap file of BYTES in DIR at the highest
# priority, behind zswap with max_pool_percent=PCT (20, its default) and lz4,
# or lzo where the kernel's crypto API has no lz4 (zram has its own);
# zswap's settings are kept to be put back.  Sets SWAPFILE and ZSWAP_COMP.
SWAPFILE=
ZSWAP_SAVED=
ZSWAP_COMP=
zswap_on()
{
	local p=/sys/module/zswap/parameters

	[ -w "$p/enabled" ] || skip "no zswap in this kernel"
	ZSWAP_SAVED="$(cat "$p/enabled") $(cat "$p/compressor") $(cat "$p/max_pool_percent")"
	for ZSWAP_COMP in lz4 lzo ""; do
		[ -n "$ZSWAP_COMP" ] || die "zswap has neither lz4 nor lzo"
		echo "$ZSWAP_COMP" 2>/dev/null >"$p/compressor" && break
	done
	echo "${3:-20}" >"$p/max_pool_percent" || die "cannot set zswap's max_pool_percent"
	echo Y >"$p/enabled" || die "cannot enable zswap"
	SWAPFILE=$2/tierfs-bench-swap.$$
	fallocate -l "$1" "$SWAPFILE" || die "cannot create $SWAPFILE"
	chmod 600 "$SWAPFILE"
	mkswap "$SWAPFILE" >>"$LOG" 2>&1 || die "mkswap $SWAPFILE failed"
	swapon -p 32767 "$SWAPFILE" 2>>"$LOG" || die "swapon $SWAPFILE failed"
}

# zswap_off: swapoff and remove the swap file, zswap's settings put back.
zswap_off()
{
	local p=/sys/module/zswap/parameters enabled compressor pct

	if [ -n "$SWAPFILE" ]; then
		if grep -q "^$SWAPFILE " /proc/swaps && ! swapoff "$SWAPFILE" 2>>"$LOG"; then
			echo "$NAME: swapoff $SWAPFILE failed; it is still a swap file" >&2
			return 1
		fi
		rm -f "$SWAPFILE"
		SWAPFILE=
	fi
	[ -n "$ZSWAP_SAVED" ] || return 0
	read -r enabled compressor pct <<<"$ZSWAP_SAVED"
	echo "$enabled" >"$p/enabled"
	echo "$compressor" >"$p/compressor"
	echo "$pct" >"$p/max_pool_percent"
	ZSWAP_SAVED=
}

# meminfo_bytes KEY: a /proc/meminfo line's value in bytes (Zswap: the
# pool, Zswapped: the data it holds).
meminfo_bytes()
{
	awk -v k="$1:" '$1 == k { printf "%.0f\n", $2 * 1024 }' /proc/meminfo
}

# vmstat_count KEY: a /proc/vmstat counter (pswpout: pages written to swap,
# zswpwb: of them, written back from zswap's pool); 0 where it is missing.
vmstat_count()
{
	awk -v k="$1" '$1 == k { n = $2 } END { print n + 0 }' /proc/vmstat
}

# zram_mm_stat FIELD: a field of the zram device's mm_stat (1 orig_data_size,
# 2 compr_data_size, 3 mem_used_total, 5 mem_used_max, ...).
zram_mm_stat()
{
	awk -v f="$1" '{ print $f }' "/sys/block/$ZRAM/mm_stat"
}

# cg_new PATH MIB [noswap]: a fresh memory cgroup at PATH limited to MIB,
# swappiness 100; with noswap, memory+swap is limited to the same, so nothing
# in it can be swapped out by the kernel (to a swap device someone else
# turned on).  Prints its path.
cg_new()
{
	local cg=$1 bytes=$(($2 * 1024 * 1024))

	mkdir "$cg" || return 1
	echo "$bytes" >"$cg/memory.limit_in_bytes" || return 1
	echo 100 >"$cg/memory.swappiness" || return 1
	if [ "${3-}" = noswap ] && [ -e "$cg/memory.memsw.limit_in_bytes" ]; then
		echo "$bytes" >"$cg/memory.memsw.limit_in_bytes" || return 1
	fi
	echo "$cg"
}

# cg_remove CGROUP...: moves this shell back to the root cgroup (it never
# joins one, but be sure) and removes each cgroup, retrying for 5 s while
# its last processes exit.
cg_remove()
{
	local cg

	echo $$ >"$CG_ROOT/cgroup.procs" 2>/dev/null
	for cg in "$@"; do
		[ -d "$cg" ] || continue
		for _ in $(seq 50); do
			rmdir "$cg" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$cg" ] && echo "$NAME: could not remove $cg" >&2
	done
	return 0
}

# in_cg CGROUP CMD ARGS...: runs CMD inside CGROUP (its children stay there).
in_cg()
{
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$@" 9>&-
}

# cg_oom_kills CGROUP: processes the OOM killer killed in it so far.
cg_oom_kills()
{
	awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print 0 }' \
		"$1/memory.oom_control"
}

# cg_stat CGROUP KEY: a value of the cgroup's memory.stat (0 when absent).
cg_stat()
{
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }' \
		"$1/memory.stat"
}
