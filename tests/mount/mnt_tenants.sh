#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Tenants: files are charged to the memory cgroup of the process that
# created them.  Two cgroups with limits of 64 and 512 MiB each write 128
# MiB: the first keeps at most its share (cg_share=50%: 32 MiB) resident,
# the second more; tierctl set gives a tenant another share; every byte
# reads back.  Files from outside any limited cgroup go to the root.
#
# usage: mnt_tenants.sh TIERFS TIERCTL
# Exits 0 pass, 1 fail, 77 skip (not root, no /dev/fuse, no v1 memory cgroup).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

memcg_root=/sys/fs/cgroup/memory
[ -w "$memcg_root/cgroup.procs" ] || { echo "skip: no cgroup v1 memory controller"; exit 77; }
small=tierfs-test-small-$$
big=tierfs-test-big-$$

remove_cgroups() {
	for c in "$small" "$big"; do
		[ -d "$memcg_root/$c" ] || continue
		for _ in $(seq 50); do rmdir "$memcg_root/$c" 2>/dev/null && break; sleep 0.1; done
	done
}
trap 'cleanup; remove_cgroups' EXIT

mkdir "$memcg_root/$small" "$memcg_root/$big" || exit 1
echo $((64 << 20)) >"$memcg_root/$small/memory.limit_in_bytes"
echo $((512 << 20)) >"$memcg_root/$big/memory.limit_in_bytes"

# Run "$@" inside cgroup $1.
in_cg() {
	cg_dir=$memcg_root/$1
	shift
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg_dir" "$@"
}

# One field of a tenant in the stats, by cgroup path.
tenant_of() {
	"$tierctl" stats "$mnt" --json | tr '{' '\n' | grep "\"path\":\"/$1\"" |
		sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

src=$work/src
head -c $((128 << 20)) /dev/urandom >"$src"

"$tierfs" "$mnt" -o mem=512M,backend=zpool,cache=never || { echo "FAIL - mount"; exit 1; }
in_cg "$small" cp "$src" "$mnt/small" && handoffs=$(stat_of handoffs) &&
	in_cg "$big" cp "$src" "$mnt/big" &&
	cp "$src" "$mnt/outside" && ok "each wrote 128 MiB" || fail "writes" "success" "an error"

# Over the ring, a write that reclaims for its tenant goes to a worker, so
# that the queue's thread never waits: the small tenant's writes past its
# share, far below the mount's budget.
if [ "$("$tierctl" stats "$mnt" --json |
	sed -n 's/.*"transport":{"mode":"\([a-z]*\)".*/\1/p')" = uring ]; then
	[ "${handoffs:-0}" -gt 0 ] && ok "small: writes past its share handed off ($handoffs)" ||
		fail "small: writes past its share handed off" "> 0" "${handoffs:-none}"
fi

limit=$(tenant_of "$small" limit_bytes)
[ "$limit" -eq $((32 << 20)) ] && ok "small: share 32 MiB from cg_share=50%" ||
	fail "small: limit_bytes" $((32 << 20)) "$limit"
resident=$(tenant_of "$small" resident_bytes)
[ "$resident" -le $((33 << 20)) ] && ok "small: $resident bytes resident, within its share" ||
	fail "small: resident" "<= $((33 << 20))" "$resident"
swapped=$(tenant_of "$small" swapped_bytes)
[ "$swapped" -ge $((90 << 20)) ] && ok "small: the rest swapped ($swapped)" ||
	fail "small: swapped" ">= $((90 << 20))" "$swapped"
resident=$(tenant_of "$big" resident_bytes)
[ "$resident" -ge $((96 << 20)) ] && ok "big: keeps more resident ($resident)" ||
	fail "big: resident" ">= $((96 << 20))" "$resident"
"$tierctl" stats "$mnt" | grep -q "^  /  .*root" && ok "outside any limited cgroup: the root" ||
	fail "root tenant" "a line for /" "none"

# A share set by hand, then a write makes the tenant live within it.
"$tierctl" set "$mnt" cgroup="/$big" mem=16M >/dev/null &&
	ok "tierctl set cgroup=/$big mem=16M" || fail "tierctl set cgroup=" "exit 0" "$?"
in_cg "$big" dd if=/dev/zero of="$mnt/big2" bs=1M count=8 conv=notrunc 2>/dev/null
in_cg "$big" dd if="$src" of="$mnt/big3" bs=1M count=8 2>/dev/null
resident=$(tenant_of "$big" resident_bytes)
[ "$resident" -le $((17 << 20)) ] && ok "big: within its new share ($resident)" ||
	fail "big: resident after set" "<= $((17 << 20))" "$resident"
"$tierctl" set "$mnt" cgroup=relative mem=1M >/dev/null 2>&1
[ $? -eq 1 ] && ok "cgroup= wants an absolute path" || fail "cgroup=relative" "exit 1" "$?"

for f in small big outside; do
	cmp -s "$src" "$mnt/$f" && ok "$f reads back" || fail "$f read back" "exact" "a difference"
done
rm -f "$mnt"/*
for c in "$small" "$big"; do
	[ "$(tenant_of "$c" swapped_bytes)" -eq 0 ] && [ "$(tenant_of "$c" resident_bytes)" -eq 0 ] &&
		ok "$c: nothing charged after rm" || fail "$c after rm" "0 resident, 0 swapped" \
		"$(tenant_of "$c" resident_bytes)/$(tenant_of "$c" swapped_bytes)"
done
fusermount3 -u "$mnt"
finish
