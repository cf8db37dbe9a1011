#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Run as init's child in the guest run.sh boots: the unified hierarchy
# alone, as systemd sets it up, and tierfs under it.
#  1. memory.max with the daemon alone in its cgroup: the budget and the
#     limit come from memory.max, reclaim is driven by memory.pressure
#     (PSI), compressible data many times the limit goes in whole without
#     an ENOSPC, and reads back.
#  2. The daemon and its writer in one cgroup under memory.max: what the
#     writer holds comes off the daemon's limit, and nobody is OOM-killed;
#     and a pod's case, the writer alone in a cgroup far smaller than what
#     it writes, the daemon outside with cache=never: nothing charged to it.
#  3. memory.high alone: the limit the daemon keeps to.
#  4. Rootless: user nobody mounts through fusermount3 inside a cgroup
#     delegated to it, and the daemon keeps to that cgroup's limit.
#  5. FUSE over io_uring, where the guest's kernel has it.
# Prints "ok - ", "FAIL - " and "skip - " lines, then "guest: N passed, N
# failed".

cg=/sys/fs/cgroup
nr_passed=0
nr_failed=0
MIB=1048576

ok() {
	nr_passed=$((nr_passed + 1))
	echo "ok - $1"
}
fail() {
	nr_failed=$((nr_failed + 1))
	echo "FAIL - $1: expected $2, got $3"
}
expect() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "'$2'" "'$3'"; fi; }

# stat_of MNT GROUP.KEY or KEY: one figure of tierctl stats --json.
stat_of() {
	tierctl stats "$1" --json | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" | head -n 1
}

# text NAME MIB: that many MiB of one line again and again (lz4: about 30:1).
text() {
	yes "tierfs guest $1: a line of a log that repeats" | head -c $(($2 * MIB))
}

# new_cgroup NAME FILE VALUE: a child of the root with one memory setting.
new_cgroup() {
	mkdir "$cg/$1" && echo "$3" >"$cg/$1/$2"
}

# in_cgroup NAME COMMAND...: COMMAND run in cgroup NAME.
in_cgroup() {
	name=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg/$name" "$@"
}

oom_kills() { sed -n 's/^oom_kill //p' "$cg/$1/memory.events"; }

# mounted COMMAND...: COMMAND mounts a tierfs; a failure fails case $n.
mounted() {
	"$@" && return
	fail "$n: mount" "status 0" "a failure"
	return 1
}

mount -t cgroup2 cgroup2 "$cg" || {
	fail "cgroup2" "a mount" "none"
	echo "guest: $nr_passed passed, $nr_failed failed"
	exit
}
echo "+memory" >"$cg/cgroup.subtree_control"
mkdir -p /mnt/a /mnt/b /mnt/c

# 1. memory.max, the daemon alone.
n="memory.max=96M, daemon alone"
new_cgroup a memory.max 96M
if mounted in_cgroup a tierfs /mnt/a -o log=stderr; then
	expect "$n: the limit is the cgroup's" "cgroup $cg/a/memory.max" "$(stat_of /mnt/a mem_source)"
	expect "$n: mem_limit_bytes" $((96 * MIB)) "$(stat_of /mnt/a mem_limit_bytes)"
	case $(stat_of /mnt/a pressure_source) in
	"v2 memory.pressure"*) ok "$n: reclaim driven by PSI ($(stat_of /mnt/a pressure_source))" ;;
	*) fail "$n: pressure source" "v2 memory.pressure ..." "$(stat_of /mnt/a pressure_source)" ;;
	esac
	want=$(text a 192 | md5sum | cut -d' ' -f1)
	if text a 192 >/mnt/a/log 2>/tmp/err; then
		ok "$n: 192 MiB of text written (ratio $(stat_of /mnt/a compression_ratio), $(stat_of /mnt/a room_waits) waits for room)"
	else
		fail "$n: 192 MiB of text" "no error" "$(cat /tmp/err), capacity_enospc $(stat_of /mnt/a capacity_enospc)"
	fi
	expect "$n: read back" "$want" "$(md5sum </mnt/a/log | cut -d' ' -f1)"
	expect "$n: no OOM kill" 0 "$(oom_kills a)"
	umount /mnt/a
fi

# 2. The daemon and its writer in one cgroup.
n="memory.max=128M, daemon and writer together"
new_cgroup b memory.max 128M
if mounted in_cgroup b tierfs /mnt/b -o log=stderr; then
	if in_cgroup b sh -c "yes 'tierfs guest b: one cgroup' | head -c $((128 * MIB)) >/mnt/b/f" \
		2>/tmp/err; then
		ok "$n: 128 MiB of text written from inside"
	else
		fail "$n: 128 MiB from inside" "no error" "$(cat /tmp/err)"
	fi
	expect "$n: data_bytes" $((128 * MIB)) "$(stat_of /mnt/b data_bytes)"
	expect "$n: no OOM kill" 0 "$(oom_kills b)"
	umount /mnt/b
fi

# 2b. A pod's case: the writer alone in a small cgroup, the daemon outside,
# cache=never: the files are not charged to the writer.
n="writer in a 32 MiB cgroup, daemon outside, cache=never"
new_cgroup e memory.max 32M
if mounted tierfs /mnt/b -o cache=never,log=stderr; then
	if in_cgroup e sh -c "yes 'tierfs guest e: a pod' | head -c $((128 * MIB)) >/mnt/b/f" \
		2>/tmp/err; then
		ok "$n: 128 MiB written"
	else
		fail "$n: 128 MiB" "no error" "$(cat /tmp/err)"
	fi
	peak=$(cat "$cg/e/memory.peak")
	if [ "$peak" -le $((8 * MIB)) ]; then
		ok "$n: the writer's cgroup peaked at $((peak / 1024)) KiB"
	else
		fail "$n: the writer's memory.peak" "<= 8 MiB" "$((peak / 1024)) KiB"
	fi
	expect "$n: no OOM kill" 0 "$(oom_kills e)"
	umount /mnt/b
fi

# 3. memory.high alone.
n="memory.high=64M"
new_cgroup c memory.high 64M
if mounted in_cgroup c tierfs /mnt/c -o log=stderr; then
	expect "$n: the limit is memory.high" "cgroup $cg/c/memory.high" \
		"$(stat_of /mnt/c mem_source)"
	if text c 96 >/mnt/c/f 2>/tmp/err; then
		ok "$n: 96 MiB of text written"
	else
		fail "$n: 96 MiB of text" "no error" "$(cat /tmp/err)"
	fi
	peak=$(stat_of /mnt/c footprint_peak_bytes)
	if [ "$peak" -le $((64 * MIB)) ]; then
		ok "$n: footprint peak $((peak / MIB)) MiB, within memory.high"
	else
		fail "$n: footprint peak" "<= 64 MiB" "$((peak / MIB)) MiB"
	fi
	umount /mnt/c
fi

# 4. Rootless: nobody, fusermount3 and a cgroup delegated to it.
n="rootless"
new_cgroup d memory.max 64M
chown 65534:65534 "$cg/d" "$cg/d/cgroup.procs" "$cg/d/cgroup.subtree_control"
mkdir -p /tmp/nobody
chown 65534:65534 /tmp/nobody
if ! command -v fusermount3 >/dev/null; then
	fail "$n" "fusermount3 in the guest" "none"
elif in_cgroup d su -s /bin/sh nobody -c \
	'mkdir /tmp/nobody/mnt && tierfs /tmp/nobody/mnt -o log=stderr &&
	yes "tierfs guest d: rootless" | head -c 48m >/tmp/nobody/mnt/f &&
	tierctl stats /tmp/nobody/mnt --json >/tmp/nobody/stats.json &&
	fusermount3 -u /tmp/nobody/mnt' 2>/tmp/err; then
	ok "$n: nobody mounted, wrote 48 MiB and unmounted (pressure: $(sed -n \
		's/.*"pressure_source":"\([^"]*\)".*/\1/p' /tmp/nobody/stats.json))"
	expect "$n: the delegated cgroup's limit" "cgroup $cg/d/memory.max" \
		"$(sed -n 's/.*"mem_source":"\([^"]*\)".*/\1/p' /tmp/nobody/stats.json)"
else
	fail "$n" "a mount by nobody" "$(cat /tmp/err)"
fi

# 5. The ring.
if [ -e /sys/module/fuse/parameters/enable_uring ]; then
	echo Y >/sys/module/fuse/parameters/enable_uring
	n="ring"
	if mounted tierfs /mnt/a -o transport=uring,log=stderr; then
		expect "$n: the transport" "/mnt/a uring" \
			"$(tierctl list -n -o mountpoint,transport | grep '^/mnt/a ' | tr -s ' ')"
		umount /mnt/a
	fi
else
	echo "skip - ring: kernel $(uname -r) has no FUSE over io_uring (6.14 and later)"
fi

echo "guest: $nr_passed passed, $nr_failed failed"
