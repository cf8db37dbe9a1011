#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Backend failures through a real mount, with a test build of the daemon
# whose backend fails on demand: a store that fails keeps the page resident
# and, with nothing evictable, writes get ENOSPC while every byte already
# written stays readable; a load that fails fails that read with EIO only.
#
# usage: mnt_faults.sh TIERFS_FAULTY TIERCTL
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"


head -c 16M /dev/urandom >"$work/small"
head -c 96M /dev/urandom >"$work/big"
small=$(md5 "$work/small")
big=$(md5 "$work/big")

mount_faulty() {
	TIERFS_FAULT=$1 "$tierfs" "$mnt" -o "size=1G,mem=32M,swapsize=1G,cache=never"
}

# Every store fails: pages stay resident, the budget fills, writes get ENOSPC.
if mount_faulty store:1:persistent; then
	cp "$work/small" "$mnt/small"
	if cp "$work/big" "$mnt/big" 2>"$work/err"; then
		fail "store fails: write past the budget" "ENOSPC" "success"
	else
		grep -q "No space left" "$work/err" && ok "store fails: write past the budget gets ENOSPC" ||
			fail "store fails: error" "No space left on device" "$(cat "$work/err")"
	fi
	[ "$(md5 "$mnt/small")" = "$small" ] && ok "store fails: data written before is intact" ||
		fail "store fails: earlier file" "$small" "$(md5 "$mnt/small")"
	failures=$(stat_of store_failures)
	[ "${failures:-0}" -gt 0 ] && ok "store fails: $failures store failures counted" ||
		fail "store fails: store_failures" "> 0" "${failures:-none}"
	rm -f "$mnt/big"
	sleep 1
	head -c 4096 /dev/urandom >"$mnt/after" && ok "store fails: the mount takes writes again" ||
		fail "store fails: write after delete" "success" "failure"
	fusermount3 -u "$mnt"
else
	fail "store fails: mount" "status 0" "a failure"
fi

# One store fails: the page stays and goes out with a later batch.
if mount_faulty store:2; then
	cp "$work/big" "$mnt/big"
	"$tierctl" reclaim "$mnt" all >/dev/null
	[ "$(md5 "$mnt/big")" = "$big" ] && ok "one store fails: everything reads back exact" ||
		fail "one store fails: read back" "$big" "$(md5 "$mnt/big")"
	fusermount3 -u "$mnt"
else
	fail "one store fails: mount" "status 0" "a failure"
fi

# One load fails: that read gets EIO, the next one the data.
if mount_faulty load:1; then
	cp "$work/big" "$mnt/big"
	"$tierctl" reclaim "$mnt" all >/dev/null
	if dd if="$mnt/big" of=/dev/null bs=1M 2>"$work/err"; then
		fail "one load fails: first read" "EIO" "success"
	else
		grep -q "Input/output error" "$work/err" && ok "one load fails: that read gets EIO" ||
			fail "one load fails: error" "Input/output error" "$(cat "$work/err")"
	fi
	[ "$(md5 "$mnt/big")" = "$big" ] && ok "one load fails: the next read is exact" ||
		fail "one load fails: read back" "$big" "$(md5 "$mnt/big")"
	errors=$(stat_of swapin_errors)
	[ "${errors:-0}" -gt 0 ] && ok "one load fails: $errors swap-in errors counted" ||
		fail "one load fails: swapin_errors" "> 0" "${errors:-none}"
	fusermount3 -u "$mnt"
else
	fail "one load fails: mount" "status 0" "a failure"
fi

finish
