#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The swap tier through a real mount, for every backend: mem=64M, a set of
# files of mixed compressibility (zero pages, text, random) many times the
# budget, read back byte-exact after everything was evicted; the budget
# holds; deleting everything leaves the backend empty.
#
# usage: mnt_swap.sh TIERFS TIERCTL [TOTAL_MB]   (default 1024)
# A backend or compressor the build left out is skipped.
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse).

set -u
tierfs=$1
tierctl=$2
total_mb=${3:-1024}

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

# The source: 64 MiB in 1 MiB pieces, cycling zeros, text, random, text.
src=$work/src
for i in $(seq 0 63); do
	case $((i % 4)) in
	0) head -c 1048576 /dev/zero ;;
	2) head -c 1048576 /dev/urandom ;;
	*) head -c 786432 /dev/urandom | base64 -w 0 | head -c 1048576 ;;
	esac
done >"$src"
want=$(md5 "$src")
nr_files=$((total_mb / 64))

check_backend() {
	name=$1
	opts=$2

	built_in "$name" "$opts" || return
	if ! "$tierfs" "$mnt" -o "size=4G,mem=64M,swapsize=2G,cache=never,$opts"; then
		fail "$name: mount" "status 0" "a failure"
		return
	fi
	i=0
	while [ $i -lt "$nr_files" ]; do
		cp "$src" "$mnt/f$i" || break
		i=$((i + 1))
	done
	[ $i -eq "$nr_files" ] && ok "$name: wrote $total_mb MiB" ||
		fail "$name: write" "$nr_files files" "$i"
	resident=$(stat_of resident_bytes)
	budget=$(stat_of mem_budget_bytes)
	[ "$resident" -le "$budget" ] && ok "$name: resident $resident <= budget $budget" ||
		fail "$name: resident within the budget" "<= $budget" "$resident"
	"$tierctl" reclaim "$mnt" all >/dev/null &&
		ok "$name: tierctl reclaim all" || fail "$name: tierctl reclaim all" "exit 0" "$?"
	# Everything goes, but pages whose store is still being finished.
	resident=$(stat_of resident_bytes)
	[ "$resident" -le $((1 << 20)) ] && ok "$name: resident $resident after reclaim all" ||
		fail "$name: resident after reclaim all" "<= 1 MiB" "$resident"
	stored=$(stat_of stored_pages)
	filled=$(stat_of same_filled_pages)
	[ "${stored:-0}" -gt 0 ] && ok "$name: backend holds $stored pages" ||
		fail "$name: backend stored_pages" "> 0" "${stored:-none}"
	[ "${filled:-0}" -gt 0 ] && ok "$name: $filled same-filled pages stored as a value" ||
		fail "$name: same_filled_pages" "> 0" "${filled:-none}"
	bad=0
	i=0
	while [ $i -lt "$nr_files" ]; do
		got=$(md5 "$mnt/f$i")
		[ "$got" = "$want" ] || bad=$((bad + 1))
		i=$((i + 1))
	done
	[ $bad -eq 0 ] && ok "$name: every file reads back byte-exact" ||
		fail "$name: byte-exact read back" "0 differing files" "$bad"
	swapins=$(stat_of swapins)
	[ "${swapins:-0}" -gt 0 ] && ok "$name: $swapins pages swapped in" ||
		fail "$name: swapins" "> 0" "${swapins:-none}"

	# O_DIRECT bypasses the resident tier: read back, not brought back.
	"$tierctl" reclaim "$mnt" all >/dev/null
	before=$(stat_of swapins)
	got=$(dd if="$mnt/f0" iflag=direct bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)
	after=$(stat_of swapins)
	[ "$got" = "$want" ] && [ "$before" = "$after" ] &&
		ok "$name: O_DIRECT read is exact and swaps nothing in" ||
		fail "$name: O_DIRECT read" "$want, swapins $before" "$got, swapins $after"

	# Readers and writers while everything is evicted again and again.
	if command -v fio >/dev/null; then
		( while [ ! -e "$work/stop" ]; do
			"$tierctl" reclaim "$mnt" all >/dev/null 2>&1
			sleep 0.05
		done ) &
		evictor=$!
		fio --name=verify --directory="$mnt" --numjobs=2 --size=32M --bs=4k \
			--rw=randrw --ioengine=psync --verify=crc32c --verify_fatal=1 \
			--do_verify=1 --verify_state_save=0 --randseed=7 --group_reporting >"$work/fio.log" 2>&1
		rc=$?
		touch "$work/stop"
		wait "$evictor"
		rm -f "$work/stop" "$mnt"/verify.*
		[ $rc -eq 0 ] && ok "$name: fio randrw verify while evicting" ||
			{ fail "$name: fio verify while evicting" "exit 0" "$rc"; cat "$work/fio.log"; }
	fi
	rm -f "$mnt"/f*
	sleep 1 # the release of the last file is asynchronous
	stored=$(stat_of stored_pages)
	data=$(stat_of data_bytes)
	[ "$stored" = 0 ] && [ "$data" = 0 ] && ok "$name: empty after deleting everything" ||
		fail "$name: backend empty after rm" "stored 0, data 0" "stored $stored, data $data"
	fusermount3 -u "$mnt"
}

check_backend zpool-lz4 "backend=zpool,compressor=lz4"
check_backend zpool-zstd "backend=zpool,compressor=zstd:1"
check_backend ramdisk "backend=ramdisk"
check_backend file "backend=file:${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test.swap.$$"

finish
