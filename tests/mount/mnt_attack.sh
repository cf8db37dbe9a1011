#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Another user's worst with metadata.  The daemon runs in a 64 MiB memory
# cgroup (96 MiB over the ring), mounted by root with its defaults
# (allow_other, root directory 1777) on each backend (zpool, file, ramdisk,
# redis), root's checksummed file in it.  As user nobody, each until
# refused: files with two 60000-byte xattrs, symlinks with 4000-byte
# targets, hard links with 255-byte names, empty files with 255-byte names,
# each from inside the daemon's cgroup on two backends and from outside on
# the other two; on zpool (inside) and file (outside), a tree of directories
# each in the last.  Each flood must end with
# ENOSPC for the attacker, no OOM kill, the mount up, root's file intact
# (and renamed while full) and the footprint's peak inside the limit; once
# the attacker's files are gone (rm -rf, which lists a full mount),
# metadata_bytes is back where it was.  Then the inode space as
# tmpfs counts it: with nr_inodes=64, the 1000-byte xattrs one file takes
# before ENOSPC, on tmpfs and on tierfs.  Last, a drain beside nobody's
# writer: the drain (slowed loads) never takes the resident pages past the
# budget, the writer gets ENOSPC at once instead of waiting with its file
# locked, and once its file is gone the drain finishes.
#
# usage: mnt_attack.sh TIERFS TIERCTL ATTACK_PY TIERFS_FAULTY
# Exits 0 pass, 1 fail, 77 skip (not root, no /dev/fuse, no v1 memory
# cgroup, no user nobody, a sanitizer build).

set -u
tierfs=$1
tierctl=$2
attack=$3
tierfs_faulty=$4

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

require_memcg_limits
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
cg=$memcg_root/tierfs-test-attack-$$
limit=$((64 << 20))
# The ring's buffers (two queues of 16 MiB) are part of the footprint: the
# same room for everything else takes 32 MiB more.
[ "${TIERFS_TEST_TRANSPORT:-}" = uring ] && limit=$((96 << 20))
chmod 755 "$work" # nobody reaches the mount point

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# flood NAME KIND [in_cg]: nobody's flood of KIND in a directory of its own,
# then what must hold after it, then the directory removed by root.
flood() {
	what="$1, $2"
	dir=$mnt/nobody-$2
	meta_before=$(stat_of metadata_bytes)
	as_nobody mkdir "$dir"
	# shellcheck disable=SC2086 # $3 is a command word or nothing
	line=$(${3:-} setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 "$attack" "$2" "$dir" 10000000 120)
	case "$line" in
	*"errno ENOSPC") ok "$what: $line" ;;
	*) fail "$what: the attacker's end" "errno ENOSPC" "$line" ;;
	esac
	check_no_oom "$what"
	# Full: a rename to a name no longer than the old one still works.
	mv "$mnt/root-file" "$mnt/root-fil" && mv "$mnt/root-fil" "$mnt/root-file" &&
		ok "$what: root renames while full" || fail "$what: rename while full" "success" "an error"
	[ "$(md5 "$mnt/root-file")" = "$want" ] && ok "$what: root's file intact" ||
		fail "$what: root's file" "$want" "$(md5 "$mnt/root-file" 2>&1)"
	peak=$(stat_of footprint_peak_bytes)
	[ "$peak" -le "$limit" ] && ok "$what: footprint peak $((peak >> 20)) MiB of $((limit >> 20))" ||
		fail "$what: footprint peak" "<= $limit" "$peak"
	meta=$(stat_of metadata_bytes)
	echo "# $what: metadata_bytes $meta, inode_space_bytes $(stat_of inode_space_bytes)," \
		"cgroup peak $(($(cat "$cg/memory.max_usage_in_bytes") >> 20)) MiB"
	rm -rf "$dir"
	meta=$(stat_of metadata_bytes)
	[ "$meta" -le $((meta_before + 4096)) ] && ok "$what: metadata back to $meta bytes" ||
		fail "$what: metadata_bytes after rm" "<= $((meta_before + 4096))" "$meta"
}

# check_backend OPTIONS SAME [DEEP]: the floods against a mount with
# OPTIONS, the deep tree too if DEEP is "deep"; those named in SAME run from
# inside the daemon's cgroup, the others from outside.  The backends take
# turns, so each flood runs both ways.
check_backend() {
	opts=$1
	name=${opts%%:*}
	mount_in_cg "$name" "$limit" "$opts" || return
	head -c $((8 << 20)) /dev/urandom >"$mnt/root-file"
	want=$(md5 "$mnt/root-file")
	for kind in xattrs symlinks links names ${3:-}; do
		case " $2 " in
		*" $kind "*) flood "$name" "$kind" in_cg ;;
		*) flood "$name" "$kind" ;;
		esac
	done
	grep -q " $mnt " /proc/self/mounts && ok "$name: still mounted" ||
		fail "$name: the mount" "up" "gone"
	# The room the attacker held is root's again.
	head -c $((8 << 20)) /dev/urandom >"$mnt/root-file2" && ok "$name: root writes again" ||
		fail "$name: root's write after the floods" "success" "an error"
	unmount_cg
}

# The deep tree (metadata alone, 12 s to remove) on two of them.
check_backend backend=zpool "symlinks names deep" deep
check_backend "backend=file:$work/swap,swapsize=256M" "xattrs links" deep
check_backend backend=ramdisk "symlinks names"
if ! built_in redis backend=redis; then
	:
elif ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	nr_skipped=$((nr_skipped + 1))
	echo "skip - backend=redis: redis-server or redis-cli not installed"
else
	# shellcheck source=tests/redis/servers.sh
	. "$(dirname "$0")/../redis/servers.sh"
	trap 'cleanup; redis_stop_all' EXIT
	port=$(redis_free_port)
	redis_start "$port" || exit 1
	check_backend "backend=redis://127.0.0.1:$port" "xattrs links"
fi

# A drain beside a writer, in the same cgroup: nothing is evicted while a
# drain runs, so a write past the budget fails at once, and the drain
# waits for room rather than allocating past the budget.
check_drain_beside_writer() {
	name="drain beside a writer"
	export TIERFS_FAULT=load:slow:300
	mount_in_cg "$name" "$limit" "backend=file:$work/swap,swapsize=256M" "$tierfs_faulty"
	rc=$?
	unset TIERFS_FAULT
	[ $rc -eq 0 ] || return
	head -c $((12 << 20)) /dev/urandom >"$mnt/root-file"
	want=$(md5 "$mnt/root-file")
	head -c $((64 << 20)) /dev/urandom >"$work/rand"
	chmod 644 "$work/rand"
	"$tierctl" reclaim "$mnt" all >/dev/null
	stored=$(stat_of stored_pages)
	[ "${stored:-0}" -gt 1024 ] && ok "$name: $stored pages swapped" ||
		fail "$name: stored_pages" "> 1024" "${stored:-none}"
	"$tierctl" drain "$mnt" >"$work/drain.out" 2>&1 &
	drain_pid=$!
	start=$(date +%s)
	as_nobody mkdir "$mnt/w"
	err=$(in_cg setpriv --reuid=65534 --regid=65534 --clear-groups \
		dd if="$work/rand" of="$mnt/w/f" bs=1M 2>&1 >/dev/null)
	took=$(($(date +%s) - start))
	case "$err" in
	*"No space left"*) ok "$name: the writer gets ENOSPC" ;;
	*) fail "$name: the writer's end" "No space left on device" "$err" ;;
	esac
	[ "$took" -le 10 ] && ok "$name: the writer's refusal took ${took} s" ||
		fail "$name: the writer's refusal" "within 10 s" "$took s"
	worst=0
	for _ in $(seq 20); do
		over=$(($(stat_of resident_bytes) - $(stat_of mem_budget_bytes)))
		[ "$over" -gt "$worst" ] && worst=$over
		sleep 0.1
	done
	[ "$worst" -le 0 ] && ok "$name: resident pages within the budget all along" ||
		fail "$name: resident past the budget" "never" "$worst bytes over"
	rm -rf "$mnt/w"
	wait "$drain_pid"
	rc=$?
	[ "$rc" -eq 0 ] && ok "$name: the drain finishes once the room is back" ||
		fail "$name: drain" "exit 0" "exit $rc: $(cat "$work/drain.out")"
	stored=$(stat_of stored_pages)
	[ "$stored" -eq 0 ] && ok "$name: nothing left in the backend" ||
		fail "$name: stored_pages after the drain" 0 "$stored"
	[ "$(md5 "$mnt/root-file")" = "$want" ] && ok "$name: root's file intact" ||
		fail "$name: root's file" "$want" "$(md5 "$mnt/root-file" 2>&1)"
	check_no_oom "$name"
	unmount_cg
}
check_drain_beside_writer

# The inode space: xattrs take nr_inodes= room, as on tmpfs (6.6 and later).
count_small_xattrs() {
	chmod 1777 "$mnt"
	as_nobody /usr/bin/python3 "$attack" small-xattrs "$mnt/d" 100000 60 | sed -n 's/.*: \([0-9]*\) made.*/\1/p'
}
mount -t tmpfs -o nr_inodes=64 tmpfs "$mnt"
on_tmpfs=$(count_small_xattrs)
umount "$mnt"
if "$tierfs" "$mnt" -o nr_inodes=64,backend=none 2>/dev/null; then
	on_tierfs=$(count_small_xattrs)
else
	on_tierfs="no mount"
fi
df_inodes=$(stat -f -c %d "$mnt")
fusermount3 -u "$mnt"
echo "# 1000-byte xattrs with nr_inodes=64: tmpfs $on_tmpfs, tierfs $on_tierfs"
if [ "${on_tmpfs:-0}" -eq 0 ]; then
	nr_skipped=$((nr_skipped + 1))
	echo "skip - inode space: this kernel's tmpfs takes no user.* xattrs (before 6.6)"
elif [ -n "$on_tmpfs" ] && [ -n "$on_tierfs" ] && [ "$on_tierfs" -ge $((on_tmpfs - 2)) ] &&
	[ "$on_tierfs" -le $((on_tmpfs + 2)) ]; then
	ok "inode space: $on_tierfs xattrs (tmpfs $on_tmpfs)"
else
	fail "inode space: 1000-byte xattrs under nr_inodes=64" "tmpfs's $on_tmpfs within 2" "$on_tierfs"
fi
[ "$df_inodes" -le 1 ] && ok "inode space: df shows $df_inodes free inodes" ||
	fail "inode space: df's free inodes when full" "<= 1" "$df_inodes"

finish
