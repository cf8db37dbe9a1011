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
	expect_counted "store fails" store_failures "store failures counted"
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
	expect_counted "one load fails" swapin_errors "swap-in errors counted"
	fusermount3 -u "$mnt"
else
	fail "one load fails: mount" "status 0" "a failure"
fi

# A slow swap-in holds up its own read only: a read of a resident file from
# the same CPU goes on meanwhile.  On the uring transport the slow read is
# handed off that CPU's queue to a worker, which the stats count.
opts="size=1G,mem=8M,swapsize=256M,cache=never,backend=file:$work/swap"
if built_in "slow swap-in" "$opts" &&
	{ TIERFS_FAULT=load:slow:2000 "$tierfs" "$mnt" -o "$opts" ||
		{ fail "slow swap-in: mount" "status 0" "a failure"; false; }; }; then
	cp "$work/small" "$mnt/cold"
	"$tierctl" reclaim "$mnt" all >/dev/null
	head -c 64K /dev/urandom >"$work/hot"
	cp "$work/hot" "$mnt/hot"
	handoffs=$(stat_of handoffs)
	start=$(date +%s%N)
	taskset -c 0 dd if="$mnt/cold" of="$work/cold.4k" bs=4k count=1 status=none &
	cold=$!
	sleep 0.5
	taskset -c 0 cat "$mnt/hot" >"$work/hot.out"
	if kill -0 "$cold" 2>/dev/null; then
		ok "slow swap-in: a resident read on the same CPU did not wait for it"
	else
		fail "slow swap-in: resident read" "done before the swap-in" "done after it"
	fi
	cmp -s "$work/hot" "$work/hot.out" && ok "slow swap-in: the resident read is exact" ||
		fail "slow swap-in: resident read" "the file written" "other bytes"
	wait "$cold"
	took=$((($(date +%s%N) - start) / 1000000))
	[ "$took" -ge 1800 ] && ok "slow swap-in: the swap-in took $took ms (slowed to 2000)" ||
		fail "slow swap-in: swap-in time" ">= 1800 ms" "$took ms"
	head -c 4096 "$work/small" | cmp -s - "$work/cold.4k" && ok "slow swap-in: the swapped page reads exact" ||
		fail "slow swap-in: swapped page" "the file written" "other bytes"
	if [ "${TIERFS_TEST_TRANSPORT:-}" = uring ]; then
		now=$(stat_of handoffs)
		[ "${now:-0}" -gt "${handoffs:-0}" ] && ok "slow swap-in: handed off ($handoffs -> $now)" ||
			fail "slow swap-in: transport.handoffs" "> ${handoffs:-0}" "${now:-none}"
	fi
	# Two faults on one file, 8 MiB apart: the second's load runs beside
	# the first's, where a load under the file's lock made it wait for it.
	"$tierctl" reclaim "$mnt" all >/dev/null
	dd if="$mnt/cold" of="$work/first.4k" bs=4k count=1 status=none &
	first=$!
	sleep 0.5
	dd if="$mnt/cold" of="$work/second.4k" bs=4k count=1 skip=2048 status=none &
	second=$!
	wait "$first"
	first_end=$(date +%s%N)
	wait "$second"
	apart=$((($(date +%s%N) - first_end) / 1000000))
	[ "$apart" -lt 1500 ] &&
		ok "slow swap-in: a second fault on the file ended $apart ms after the first" ||
		fail "slow swap-in: second fault" "< 1500 ms after the first (its own 2000 ms beside it)" \
			"$apart ms"
	head -c 4096 "$work/small" | cmp -s - "$work/first.4k" &&
		tail -c +$((2048 * 4096 + 1)) "$work/small" | head -c 4096 | cmp -s - "$work/second.4k" &&
		ok "slow swap-in: both pages read exact" ||
		fail "slow swap-in: two faults" "the file written" "other bytes"
	fusermount3 -u "$mnt"
fi

# mount_slow_cold CASE: a mount whose every swap-in takes 2 s, its daemon's
# pid in daemon, and $mnt/cold (a copy of small) swapped out.  Returns 1,
# CASE skipped, without the file backend; 1, CASE failed, if it cannot mount.
mount_slow_cold() {
	opts="size=1G,mem=8M,swapsize=256M,cache=never,backend=file:$work/swap"
	built_in "$1" "$opts" || return
	if ! TIERFS_FAULT=load:slow:2000 "$tierfs" "$mnt" -o "$opts"; then
		fail "$1: mount" "status 0" "a failure"
		return 1
	fi
	daemon=$(pgrep -f -- "tierfs_faulty $mnt" | head -n 1)
	cp "$work/small" "$mnt/cold"
	"$tierctl" reclaim "$mnt" all >/dev/null
}

# A signal to a reader waiting on a slow swap-in: the kernel sends the daemon
# an INTERRUPT; as on tmpfs, whose swap-in does not give way to signals
# either, the read still returns the page and the handler runs after it
# (dd's SIGUSR1 report).  A SIGKILL ends the reader once the reply is in,
# and the reply to a reader gone leaves the mount and its queues serving.
interrupted() {
	case=$1
	sig=$2
	mount_slow_cold "$case" || return
	interrupts=$(stat_of interrupt)
	rm -f "$work/cold.4k"
	head -c 4096 "$work/small" >"$work/cold.ref"
	start=$(date +%s%N)
	taskset -c 0 dd if="$mnt/cold" of="$work/cold.4k" bs=4k count=1 2>"$work/err" &
	reader=$!
	sleep 0.5
	kill "-$sig" "$reader"
	wait "$reader"
	status=$?
	took=$((($(date +%s%N) - start) / 1000000))
	now=$(stat_of interrupt)
	[ "${now:-0}" -gt "${interrupts:-0}" ] && ok "$case: the daemon got an INTERRUPT" ||
		fail "$case: ops.interrupt" "> ${interrupts:-0}" "${now:-none}"
	if [ "$sig" = KILL ]; then
		[ "$status" -eq 137 ] && ok "$case: the reader was killed ($took ms)" ||
			fail "$case: the reader" "killed (137)" "status $status"
		dd if="$mnt/cold" bs=4k count=1 status=none | cmp -s - "$work/cold.ref" &&
			ok "$case: the page it asked for reads exact after" ||
			fail "$case: the page read again" "the file written" "other bytes or an error"
	elif [ "$status" -eq 0 ] && cmp -s "$work/cold.ref" "$work/cold.4k" &&
		grep -q "records in" "$work/err"; then
		ok "$case: the read returned the page exact, then the handler ran ($took ms)"
	else
		fail "$case: the read" "exact data and dd's report" "status $status, $(cat "$work/err")"
	fi
	head -c 64K /dev/urandom >"$work/hot"
	cp "$work/hot" "$mnt/hot" && taskset -c 0 cat "$mnt/hot" | cmp -s - "$work/hot" &&
		ok "$case: the mount serves the same CPU exact after" ||
		fail "$case: a write and read after" "the file written" "other bytes or an error"
	errors=$(stat_of commit_errors)
	[ "$errors" = 0 ] && ok "$case: no reply was refused" ||
		fail "$case: transport.commit_errors" "0" "${errors:-none}"
	kill -0 "$daemon" 2>/dev/null && ok "$case: the daemon is up" ||
		fail "$case: the daemon" "running" "gone"
	fusermount3 -u "$mnt"
}
interrupted "SIGUSR1 in flight" USR1
interrupted "SIGKILL in flight" KILL

# Requests in flight when the mount goes: a lazy unmount lets the slow
# swap-in finish (exact); after a SIGTERM to the daemon it finishes exact
# or fails, never with other bytes.  Either way the reader returns, the
# daemon exits and the mount is gone.
in_flight() {
	case=$1
	mount_slow_cold "$case" || return
	dd if="$mnt/cold" of="$work/cold.4k" bs=4k count=1 status=none 2>"$work/err" &
	reader=$!
	sleep 0.5
	if [ "$case" = "unmount in flight" ]; then
		umount -l "$mnt"
	else
		kill -TERM "$daemon"
	fi
	for _ in $(seq 100); do
		kill -0 "$reader" 2>/dev/null || kill -0 "$daemon" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$reader" 2>/dev/null; then
		fail "$case: the reader" "returned within 10 s" "still waiting"
		kill "$reader"
	fi
	wait "$reader"
	status=$?
	if [ "$status" -ne 0 ] && [ "$case" != "unmount in flight" ]; then
		ok "$case: the read in flight failed ($(head -c 60 "$work/err"))"
	elif [ "$status" -eq 0 ] && head -c 4096 "$work/small" | cmp -s - "$work/cold.4k"; then
		ok "$case: the read in flight finished exact"
	else
		fail "$case: the read in flight" "exact data" "status $status, $(cat "$work/err")"
	fi
	kill -0 "$daemon" 2>/dev/null && fail "$case: the daemon" "gone within 10 s" "running" ||
		ok "$case: the daemon exited"
	grep -q " $mnt " /proc/self/mounts && fail "$case: the mount" "gone" "still mounted" ||
		ok "$case: the mount is gone"
}
in_flight "unmount in flight"
in_flight "SIGTERM in flight"

# A slow drain's progress lines (20 ms a load of zpool's, which the drain
# thread loads alone: about 4 s): the ETA is what is left at the rate shown
# (the last second's), within the rounding of the MB/s.
if mount_faulty load:slow:20; then
	head -c 24M /dev/urandom >"$mnt/eta"
	"$tierctl" reclaim "$mnt" all >/dev/null
	"$tierctl" set "$mnt" mem=256M >/dev/null
	"$tierctl" drain "$mnt" >/dev/null 2>"$work/eta.err"
	expect_rc=$?
	[ $expect_rc -eq 0 ] && ok "slow drain: exit 0" || fail "slow drain" "exit 0" "exit $expect_rc"
	verdict=$(awk '/^drain: [0-9]+\/[0-9]+ pages/ {
		split($2, p, "/"); rate = $4; eta = $7; n++
		est = rate ? (p[2] - p[1]) * 4096 / (rate * 1e6) : -1
		if (rate == 0 || eta < est * 0.8 - 1 || eta > est * 1.25 + 1)
			bad = bad " [" $0 ": " est " s at that rate]"
	} END { print n + 0, (bad ? bad : "") }' "$work/eta.err")
	case $verdict in
	0*) fail "slow drain: progress lines" "one a second" "$(cat "$work/eta.err")" ;;
	*" "*"["*) fail "slow drain: ETA at the rate shown" "consistent" "$verdict" ;;
	*) ok "slow drain: ${verdict% } progress lines, each ETA what is left at its rate" ;;
	esac
	fusermount3 -u "$mnt"
else
	fail "slow drain: mount" "status 0" "a failure"
fi

# Nothing waits on a ring thread: user nobody writes past mem= on CPU 0, so
# that its write holds the file's lock across stores slowed to 1000 ms.  A
# stat of that file from CPU 0 waits for the lock, but is handed off, and a
# read of a file written meanwhile (resident: the stores are that slow),
# from CPU 0 beside it, is not held up.  rm of a swapped file frees through
# the backend: handed off too.
opts="size=1G,mem=8M,swapsize=256M,cache=never,backend=file:$work/swap2"
if built_in "busy lock" "$opts" &&
	{ TIERFS_FAULT=store:slow:1000 "$tierfs" "$mnt" -o "$opts" ||
		{ fail "busy lock: mount" "status 0" "a failure"; false; }; }; then
	chmod 755 "$work"
	cp "$work/small" "$mnt/swapped"
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	taskset -c 0 $nobody dd if="$work/big" of="$mnt/w" bs=1M count=16 status=none &
	writer=$!
	sleep 1.5
	head -c 64K /dev/urandom >"$work/hot"
	taskset -c 1 cp "$work/hot" "$mnt/hot"
	slowest=0
	for i in 1 2 3; do
		taskset -c 0 $nobody stat "$mnt/w" >/dev/null &
		sleep 0.1
		start=$(date +%s%N)
		taskset -c 0 $nobody cat "$mnt/hot" >"$work/hot.out"
		took=$((($(date +%s%N) - start) / 1000000))
		[ "$took" -gt "$slowest" ] && slowest=$took
		cmp -s "$work/hot" "$work/hot.out" || fail "busy lock: resident read $i" "exact" "other bytes"
		sleep 0.3
	done
	[ "$slowest" -lt 300 ] &&
		ok "busy lock: resident reads beside stats that wait took at most $slowest ms" ||
		fail "busy lock: resident reads beside waiting stats" "< 300 ms" "$slowest ms"
	wait
	"$tierctl" reclaim "$mnt" all >/dev/null
	handoffs=$(stat_of handoffs)
	taskset -c 0 rm "$mnt/swapped"
	if [ "${TIERFS_TEST_TRANSPORT:-}" = uring ]; then
		now=$(stat_of handoffs)
		[ "${now:-0}" -gt "${handoffs:-0}" ] && ok "busy lock: rm handed off ($handoffs -> $now)" ||
			fail "busy lock: rm of a swapped file" "handed off" "${now:-none} handoffs"
	fi
	[ "$(md5 "$mnt/w")" = "$(head -c 16M "$work/big" | md5sum | cut -d' ' -f1)" ] &&
		ok "busy lock: the file written reads back exact" ||
		fail "busy lock: read back" "the 16 MiB written" "other bytes"
	fusermount3 -u "$mnt"
fi

# A writer that outruns the reclaimer (stores slowed to 10 ms) under a limit:
# the capacity counts pages at full size until stores measure what they
# compress to, and the writer waits for that instead of getting ENOSPC
# long before the mount is full.  160 MiB that compresses about 20 to 1,
# under memlimit=96M.  memlimit= measures the daemon, and a sanitizer's
# shadow and quarantine are not its data: plain builds only.
case "${TIERFS_SANITIZED:-none}" in
none) ;;
*) echo "# slow reclaimer skipped in a $TIERFS_SANITIZED build"; finish; exit ;;
esac
python3 - "$work/text" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    for i in range(160 * 256):
        f.write(b"tierfs %08d " % i * 250 + os.urandom(96))
PY
text=$(md5 "$work/text")
if TIERFS_FAULT=store:slow:10 "$tierfs" "$mnt" -o size=1G,memlimit=96M; then
	if cp "$work/text" "$mnt/text" 2>"$work/err"; then
		ok "slow reclaimer: 160 MiB of text written under memlimit=96M"
	else
		fail "slow reclaimer: write" "success" "$(cat "$work/err")"
	fi
	[ "$(md5 "$mnt/text")" = "$text" ] && ok "slow reclaimer: the text reads back exact" ||
		fail "slow reclaimer: read back" "$text" "$(md5 "$mnt/text")"
	expect_counted "slow reclaimer" room_waits "room waits: the writer waited"
	fusermount3 -u "$mnt"
else
	fail "slow reclaimer: mount" "status 0" "a failure"
fi

finish
