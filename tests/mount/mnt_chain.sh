#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The tier chain through a real mount: backend=zpool+file in a 192 MiB
# memory cgroup with no mem=, fed 576 MiB of mixed data (zero pages, text,
# half-random, random) from inside the cgroup: no ENOSPC, no OOM kill, the
# pool within its bound, both tiers in use, every byte back.  Then the pool's
# bound lowered live while the same files are read and one is rewritten; a
# drain of both tiers; both empty after rm.  With the test daemon, a file
# tier that fails every write: the pages stay in the pool and read back.
#
# usage: mnt_chain.sh TIERFS TIERCTL TIERFS_FAULTY
# Exits 0 pass, 1 fail, 77 skip (not root, no /dev/fuse, no v1 memory cgroup,
# no file backend, a sanitizer build).

set -u
tierfs=$1
tierctl=$2
tierfs_faulty=$3

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

require_memcg_limits
built_in chain backend=file || { finish; exit; }
cg=$memcg_root/tierfs-test-chain-$$
limit_mb=192
nr_files=9

src=$work/src
mixed_data "$src"
want=$(md5 "$src")
head -c $((48 << 20)) /dev/urandom | base64 -w 0 >"$work/src2"
want2=$(md5 "$work/src2")

# One number of a tier's stats: tier_of INDEX KEY.
tier_of() {
	"$tierctl" stats "$mnt" --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["backend"]["tiers"][int(sys.argv[1])][sys.argv[2]])' "$1" "$2"
}

check_all_exact() {
	bad=0
	for f in "$mnt"/f*; do
		[ "$(md5 "$f")" = "$want" ] || bad=$((bad + 1))
	done
	[ "$bad" -eq 0 ] && ok "$1: every file reads back exact" || fail "$1: read back" "0 bad" "$bad"
}

check_cgroup() {
	mount_in_cg chain $((limit_mb << 20)) "size=2G,backend=zpool+file:$work/swap,swapsize=1G" ||
		return
	name=$("$tierctl" stats "$mnt" --json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["backend"]["name"])')
	[ "$name" = zpool+file ] && ok "backend.name zpool+file" || fail "backend.name" zpool+file "$name"
	i=0
	while [ $i -lt $nr_files ]; do
		err=$(in_cg dd if="$src" of="$mnt/f$i" bs=1M 2>&1 >/dev/null) || break
		i=$((i + 1))
	done
	[ $i -eq $nr_files ] && ok "$((nr_files * 64)) MiB written in a $limit_mb MiB cgroup" ||
		fail "write" "$nr_files files" "$i ($err)"
	limit=$(stat_of mem_limit_bytes)
	pool=$(tier_of 0 pool_bytes)
	pool_max=$(tier_of 0 pool_max_bytes)
	[ "$pool_max" -eq $((limit / 100 * 25)) ] && ok "pool_max follows the limit: $pool_max" ||
		fail "pool_max" "25% of $limit" "$pool_max"
	[ "$pool" -le "$pool_max" ] && ok "pool $pool within its bound" ||
		fail "pool within its bound" "<= $pool_max" "$pool"
	for k in 0 1; do
		n=$(tier_of $k stored_pages)
		[ "$n" -gt 0 ] && ok "tier $k holds $n pages" || fail "tier $k stored_pages" "> 0" "$n"
	done
	wb=$(tier_of 0 writebacks)
	huge=$(tier_of 0 rejects_huge)
	[ "$wb" -gt 0 ] && ok "$wb pages written back" || fail "writebacks" "> 0" "$wb"
	[ "$huge" -gt 0 ] && ok "$huge incompressible pages went to the file" ||
		fail "rejects_huge" "> 0" "$huge"
	footprint=$(stat_of footprint_bytes)
	[ "$footprint" -le $((limit_mb << 20)) ] && ok "footprint $footprint within the limit" ||
		fail "footprint" "<= $((limit_mb << 20))" "$footprint"
	in_cg sh -c 'echo 3 >/proc/sys/vm/drop_caches'
	check_all_exact "in the cgroup"

	# The bound lowered while the files are read and one is rewritten.
	wb=$(tier_of 0 writebacks)
	out=$("$tierctl" set "$mnt" pool_max=4M)
	case "$out" in
	*"pool_max=4194304"*) ok "tierctl set pool_max=4M" ;;
	*) fail "tierctl set pool_max=4M" "pool_max=4194304" "$out" ;;
	esac
	# The last file's pages are the pool's newest: rewritten as they move.
	last=$mnt/f$((nr_files - 1))
	in_cg dd if="$work/src2" of="$last" bs=64k conv=notrunc 2>"$work/dd.err" &
	writer=$!
	in_cg sh -c 'for f in "$@"; do md5sum <"$f"; done' sh "$mnt/f0" "$mnt/f1" "$mnt/f2" >"$work/sums"
	wait $writer || fail "rewrite during writeback: dd" "exit 0" "$(cat "$work/dd.err")"
	bad=$(grep -cv "^$want " "$work/sums")
	[ "$bad" -eq 0 ] && ok "reads during writeback exact" || fail "reads during writeback" "0 bad" "$bad"
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(md5 "$last")" = "$want2" ] && ok "a file rewritten during writeback reads back exact" ||
		fail "rewrite during writeback" "exact" "a difference"
	cp "$src" "$last"
	for _ in $(seq 100); do
		[ "$(tier_of 0 pool_bytes)" -le $((4 << 20)) ] && break
		sleep 0.1
	done
	pool=$(tier_of 0 pool_bytes)
	[ "$pool" -le $((4 << 20)) ] && ok "pool $pool down to its new bound" ||
		fail "pool after pool_max=4M" "<= 4 MiB" "$pool"
	[ "$(tier_of 0 writebacks)" -gt "$wb" ] && ok "the lower bound wrote back more" ||
		fail "writebacks after pool_max=4M" "> $wb" "$(tier_of 0 writebacks)"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tierctl" set "$mnt" pool_max=1G \
		>/dev/null 2>&1 && fail "nobody's tierctl set pool_max" "refused" "accepted" ||
		ok "nobody cannot set pool_max"
	check_all_exact "after writeback"

	# Drain: what fits the budget comes back from both tiers.  32 MiB of
	# one file: the budget left in this cgroup beside the pool's bound
	# (and, over io_uring, the ring) is about 50 MiB.
	"$tierctl" set "$mnt" pool_max=25% >/dev/null
	i=1
	while [ $i -lt $nr_files ]; do rm "$mnt/f$i"; i=$((i + 1)); done
	truncate -s 32M "$mnt/f0"
	want=$(head -c $((32 << 20)) "$src" | md5sum | cut -d' ' -f1)
	if "$tierctl" drain "$mnt" >/dev/null 2>"$work/drain.err"; then
		ok "tierctl drain"
	else
		fail "tierctl drain" "exit 0" "$(cat "$work/drain.err")"
	fi
	for k in 0 1; do
		n=$(tier_of $k stored_pages)
		[ "$n" -eq 0 ] && ok "drain: tier $k empty" || fail "drain: tier $k stored_pages" 0 "$n"
	done
	check_all_exact "after the drain"
	rm -f "$mnt"/f*
	for k in 0 1; do
		n=$(tier_of $k stored_pages)
		[ "$n" -eq 0 ] && ok "rm: tier $k empty" || fail "rm: tier $k stored_pages" 0 "$n"
	done
	check_no_oom chain
	unmount_cg
}

# Every write to the file fails: writeback keeps its entries in the pool.
check_failed_writeback() {
	if ! TIERFS_FAULT_TIER=file TIERFS_FAULT=store:1:persistent "$tierfs_faulty" "$mnt" \
		-o "size=1G,mem=8M,pool_max=16M,backend=zpool+file:$work/swap,swapsize=256M" 2>/dev/null; then
		fail "faulty: mount" "status 0" "a failure"
		return
	fi
	head -c $((24 << 20)) "$src" >"$work/part"
	dd if="$work/part" of="$mnt/f" bs=1M 2>/dev/null
	size=$(stat -c %s "$mnt/f")
	cmp -s -n "$size" "$work/part" "$mnt/f" && ok "faulty: $((size >> 20)) MiB written read back" ||
		fail "faulty: read back" "exact" "a difference"
	"$tierctl" set "$mnt" pool_max=1M >/dev/null
	for _ in $(seq 50); do
		[ "$(tier_of 0 writeback_errors)" -gt 0 ] && break
		sleep 0.1
	done
	errs=$(tier_of 0 writeback_errors)
	[ "$errs" -gt 0 ] && ok "faulty: $errs failed writebacks counted" ||
		fail "faulty: writeback_errors" "> 0" "$errs"
	n=$(tier_of 0 stored_pages)
	[ "$n" -gt 0 ] && ok "faulty: $n pages stay in the pool" || fail "faulty: pool pages" "> 0" "$n"
	[ "$(tier_of 1 stored_pages)" -eq 0 ] && ok "faulty: the file holds nothing" ||
		fail "faulty: file pages" 0 "$(tier_of 1 stored_pages)"
	echo 3 >/proc/sys/vm/drop_caches
	cmp -s -n "$size" "$work/part" "$mnt/f" && ok "faulty: still exact after the failures" ||
		fail "faulty: read back after failed writebacks" "exact" "a difference"
	fusermount3 -u "$mnt"
}

check_cgroup
check_failed_writeback
finish
