#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What df says can be written is what can be written: on every backend,
# bounded by size=, by the backend's slots or by a memory limit, a writer
# filling the mount until ENOSPC gets what df showed free (within 1 %), the
# data reads back, and the mount says at start when it cannot hold size=.
# A successful fallocate reserves: writes into the range never fail with
# ENOSPC, and unlink gives the space back.  Free page stock goes back to the
# kernel within seconds of a delete.  The log tells of the mount, of a run of
# ENOSPC once, and of the unmount.
#
# usage: mnt_capacity.sh TIERFS TIERCTL
# A backend the build left out is skipped.
# Exits 0 pass, 1 fail, 77 skip (not root, no /dev/fuse).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

src=$work/src
head -c $((192 << 20)) /dev/urandom >"$src"

# Free 4 KiB blocks of the mount, as df shows them.
df_free() { stat -f -c %a "$mnt"; }

# mount_with NAME OPTIONS: mounts, stderr kept in $work/err; fails, and
# the case is skipped, if the build left out the backend.
mount_with() {
	built_in "$1" "$2" || return
	if ! "$tierfs" "$mnt" -o "$2" 2>"$work/err"; then
		fail "$1: mount -o $2" "status 0" "$(cat "$work/err")"
		return 1
	fi
}

# fill NAME OPTIONS SHORT: writes until ENOSPC and compares with df.
# SHORT is yes when size= cannot be held and the mount must warn.
fill() {
	name=$1
	mount_with "$name" "$2" || return
	if [ "$3" = yes ]; then
		grep -q "^tierfs: warning: size=.*df shows the smaller" "$work/err" &&
			ok "$name: warns at mount that size= cannot be held" ||
			fail "$name: warning at mount" "size= ... df shows the smaller" "$(cat "$work/err")"
	else
		[ -s "$work/err" ] && fail "$name: mount" "no warning" "$(cat "$work/err")"
	fi
	want=$(df_free)
	err=$(dd if="$src" of="$mnt/f" bs=64k 2>&1 >/dev/null)
	case "$err" in
	*"No space left on device"*) ;;
	*) fail "$name: dd until full" "No space left on device" "$err" ;;
	esac
	got=$(($(stat -c %s "$mnt/f") >> 12))
	# Within 1 % either way.
	if [ $((got * 100)) -le $((want * 101)) ] && [ $((got * 100)) -ge $((want * 99)) ]; then
		ok "$name: wrote $got of the $want blocks df showed free"
	else
		fail "$name: blocks written until ENOSPC" "$want (df) within 1 %" "$got"
	fi
	left=$(df_free)
	[ "$left" -le $((want / 100)) ] && ok "$name: df shows $left blocks free when full" ||
		fail "$name: df when full" "<= $((want / 100))" "$left"
	cmp -s -n $((got << 12)) "$src" "$mnt/f" && ok "$name: every byte written reads back" ||
		fail "$name: read back" "the bytes written" "a difference"
	# Room again once the file is gone, as much as before.
	rm -f "$mnt/f"
	sleep 0.1
	again=$(df_free)
	[ $((again * 100)) -ge $((want * 99)) ] && ok "$name: $again blocks free after rm" ||
		fail "$name: df after rm" "about $want" "$again"
	fusermount3 -u "$mnt"
}

# reserve NAME OPTIONS: fallocate, fill the rest, then write the range.
reserve() {
	name=$1
	mount_with "$name" "$2" || return
	before=$(df_free)
	if ! fallocate -l 16M "$mnt/r"; then
		fail "$name: fallocate 16 MiB" "success" "an error"
		fusermount3 -u "$mnt"
		return
	fi
	after=$(df_free)
	[ $((before - after)) -ge 4096 ] && ok "$name: fallocate takes $((before - after)) blocks from df" ||
		fail "$name: df after fallocate" "<= $((before - 4096))" "$after"
	dd if="$src" of="$mnt/fill" bs=64k 2>/dev/null &&
		fail "$name: filling the rest" "ENOSPC" "all of it fitted"
	err=$(dd if="$src" of="$mnt/r" bs=64k count=256 conv=notrunc 2>&1 >/dev/null) &&
		ok "$name: the fallocated 16 MiB written with the mount full" ||
		fail "$name: write into the fallocated range" "success" "$err"
	cmp -s -n $((16 << 20)) "$src" "$mnt/r" && ok "$name: the reserved range reads back" ||
		fail "$name: reserved range read back" "the bytes written" "a difference"
	# Punching gives room back: all of it, or under a memory limit at least
	# what the pool really returned (a ramdisk keeps partly used chunks).
	free_full=$(df_free)
	fallocate -p -o 0 -l 8M "$mnt/r"
	punched=$(df_free)
	[ $((punched - free_full)) -ge "$3" ] && ok "$name: punching 8 MiB frees $((punched - free_full)) blocks" ||
		fail "$name: df after punch" ">= $((free_full + $3))" "$punched"
	rm -f "$mnt/r" "$mnt/fill"
	fusermount3 -u "$mnt"
}

swap=$work/swap
fill "zpool, size= binds" "size=48M,mem=8M,backend=zpool" no
fill "file, swapsize= binds" "size=1G,mem=8M,backend=file:$swap,swapsize=64M" yes
fill "file, default swapsize" "size=96M,mem=8M,backend=file:$swap" no
reserve "file fallocate" "size=1G,mem=8M,backend=file:$swap,swapsize=64M" 2048
reserve "size= fallocate" "size=64M,mem=8M,backend=zpool" 2048

# A memory limit measures the daemon: a sanitizer's shadow and quarantine
# are not the daemon's data.
case "${TIERFS_SANITIZED:-none}" in
none)
	fill "zpool, memlimit= binds" "size=1G,mem=8M,backend=zpool,memlimit=96M" yes
	fill "ramdisk, memlimit= binds" "size=1G,mem=8M,backend=ramdisk,memlimit=96M" yes
	fill "none, memlimit= binds" "size=1G,backend=none,memlimit=80M" yes
	reserve "zpool fallocate" "size=1G,mem=8M,backend=zpool,memlimit=96M" 2000
	reserve "ramdisk fallocate" "size=1G,mem=8M,backend=ramdisk,memlimit=96M" 512
	;;
*) echo "# memlimit= cases skipped in a $TIERFS_SANITIZED build" ;;
esac

# Free stock goes back: 128 MiB written and deleted over mem=32M.
if mount_with "stock" "size=1G,mem=32M,backend=zpool"; then
	mkdir "$mnt/tree"
	for i in $(seq 32); do
		dd if="$src" of="$mnt/tree/$i" bs=1M count=4 skip="$i" status=none
	done
	rm -rf "$mnt/tree"
	for _ in $(seq 50); do
		[ "$(stat_of footprint_bytes)" -le $((40 << 20)) ] && break
		sleep 0.1
	done
	footprint=$(stat_of footprint_bytes)
	ready=$(stat_of ready_bytes)
	[ "$footprint" -le $((40 << 20)) ] &&
		ok "stock: footprint $((footprint >> 20)) MiB within 5 s of the delete (ready $((ready >> 20)) MiB)" ||
		fail "stock: footprint 5 s after the delete" "<= 40 MiB" "$footprint (ready $ready)"
	fusermount3 -u "$mnt"
fi

# The log, on stderr with -f: the mount with its bounds, one line for a run
# of ENOSPC however many writes fail, a change refused and one made, and
# the unmount.
"$tierfs" "$mnt" -f -o size=1G,mem=8M,backend=ramdisk,memlimit=64M 2>"$work/log" &
pid=$!
for _ in $(seq 50); do grep -q " $mnt " /proc/self/mounts && break; sleep 0.1; done
for i in 1 2 3; do
	dd if="$src" of="$mnt/f$i" bs=64k 2>/dev/null
done
setpriv --reuid=65534 --regid=65534 --clear-groups "$tierctl" set "$mnt" mem=1G 2>/dev/null
"$tierctl" set "$mnt" readahead=direct >/dev/null
kill -TERM "$pid"
wait "$pid"
expect_log() {
	n=$(grep -c "$2" "$work/log")
	[ "$n" -eq "$3" ] && ok "log: $1" || fail "log: $1" "$3 lines matching '$2'" "$n: $(cat "$work/log")"
}
expect_log "the mount and its bounds" "^tierfs: mounted $mnt: size=1024 MiB .*backend=ramdisk.*memory limit 64 MiB" 1
expect_log "one line for three writes refused" "^tierfs: warning: ENOSPC: " 1
expect_log "a change refused to another user" "^tierfs: control: set refused to uid 65534$" 1
expect_log "a change made" "^tierfs: set: size=1073741824 .* readahead=direct$" 1
expect_log "the unmount" "^tierfs: $mnt unmounted" 1

finish
