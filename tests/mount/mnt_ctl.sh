#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tierctl against a live daemon, zpool and file backends: drain brings
# every swapped page back byte-exact, is refused when the data would not
# fit, runs under concurrent reads and writes and stops cleanly on SIGINT
# and SIGTERM; set changes the budget and the readahead policy live and
# refuses a bad pair whole; other users may read the stats but change
# nothing; malformed control requests get an error and the daemon serves on.
#
# usage: mnt_ctl.sh TIERFS TIERCTL
# A backend the build left out is skipped.
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

MIB=1048576

# The source: 25 MiB in 1 MiB pieces, cycling zeros, text, random, text.
src=$work/src
src_mb=25
for i in $(seq 0 $((src_mb - 1))); do
	case $((i % 4)) in
	0) head -c $MIB /dev/zero ;;
	2) head -c $MIB /dev/urandom ;;
	*) head -c 786432 /dev/urandom | base64 -w 0 | head -c $MIB ;;
	esac
done >"$src"
want=$(md5 "$src")

# expect NAME WANT GOT
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "$2" "$3"; fi
}

# expect_in NAME PATTERN TEXT: TEXT contains PATTERN (a case pattern).
expect_in() {
	# shellcheck disable=SC2254
	case $3 in
	*$2*) ok "$1" ;;
	*) fail "$1" "'$2' in the output" "'$3'" ;;
	esac
}

# expect_line NAME REGEX TEXT: a line of TEXT matches REGEX (grep -E).
expect_line() {
	if printf '%s\n' "$3" | grep -Eq "$2"; then
		ok "$1"
	else
		fail "$1" "a line matching '$2'" "'$3'"
	fi
}

# size_text BYTES: with the largest suffix that divides them, as tierfs says.
size_text() {
	v=$1
	for suffix in "" k m g t p e; do
		if [ "$v" -eq 0 ] || [ $((v % 1024)) -ne 0 ] || [ "$suffix" = e ]; then
			echo "$v$suffix"
			return
		fi
		v=$((v / 1024))
	done
}

# A memory pressure event of the daemon's cgroup (or, v1, of any cgroup
# below the one it listens at) makes it give back a sixteenth of its
# resident pages, so on a busy machine a drain can be partly undone at
# once: count the events around each drain.
pressure_events() { stat_of pressure_events; }

# expect_empty NAME EVENTS: the backend is empty, or the pressure events
# since there were EVENTS explain what is in it again.
expect_empty() {
	stored=$(stat_of stored_pages)
	events=$(pressure_events)
	if [ "$stored" = 0 ]; then
		ok "$1"
	elif [ "${events:-0}" -gt "$2" ]; then
		ok "$1 (but $stored pages evicted again by $((events - $2)) pressure events)"
	else
		fail "$1" 0 "$stored"
	fi
}

# reclaim_all NAME: tierctl reclaim all leaves (next to) nothing resident.
reclaim_all() {
	out=$("$tierctl" reclaim "$mnt" all 2>&1)
	rc=$?
	resident=$(stat_of resident_bytes)
	if [ $rc -eq 0 ] && [ "${resident:-0}" -le $MIB ]; then
		ok "$1: reclaim all leaves $resident bytes resident"
	else
		fail "$1: reclaim all" "exit 0, <= $MIB bytes resident" \
			"exit $rc, $resident bytes resident ($out)"
	fi
}

# write_files PREFIX N: N copies of the source, PREFIX0 ... in the mount.
write_files() {
	i=0
	while [ $i -lt "$2" ]; do
		cp "$src" "$mnt/$1$i" || return 1
		i=$((i + 1))
	done
}

# nr_bad FLAGS FILE...: how many FILEs differ from the source; FLAGS are
# dd's iflag= (direct: served without being brought back).
nr_bad() {
	flags=$1
	shift
	bad=0
	for f in "$@"; do
		got=$(dd if="$f" bs=1M iflag="$flags" status=none | md5sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || bad=$((bad + 1))
	done
	echo $bad
}

# The exit codes that need no daemon, or only its absence.
check_usage() {
	"$tierctl" stats "$work" >/dev/null 2>&1
	expect "stats on a directory that is no tierfs: exit 3" 3 $?
	"$tierctl" set "$mnt" mem >/dev/null 2>&1
	expect "set with an argument that is not KEY=VALUE: exit 2" 2 $?
	"$tierctl" drain "$mnt" --to disk >/dev/null 2>&1
	expect "drain --to disk: exit 2" 2 $?
	"$tierctl" drain --help >/dev/null 2>&1
	expect "drain --help: exit 0" 0 $?
	out=$("$tierctl" --version 2>&1)
	expect "--version: exit 0" 0 $?
	expect_line "--version names tierctl and its version" "^tierctl [0-9]+\.[0-9]+\.[0-9]+$" "$out"
	"$tierctl" stats --json "$work" >/dev/null 2>&1
	expect "stats --json before the mount point takes it: exit 3" 3 $?
	"$tierctl" stats --json >/dev/null 2>&1
	expect "stats --json with no mount point: exit 2" 2 $?
	"$tierctl" drain --to disk "$mnt" >/dev/null 2>&1
	expect "drain --to disk before the mount point: exit 2" 2 $?
}

# 1 and 2: refused while it cannot fit, then everything back byte-exact.
check_drain() {
	name=$1

	reclaim_all "$name"
	stored=$(stat_of stored_pages)
	if [ "${stored:-0}" -gt 0 ]; then
		ok "$name: $stored pages swapped out"
	else
		fail "$name: stored_pages after reclaim all" "> 0" "${stored:-none}"
	fi

	out=$("$tierctl" drain "$mnt" 2>&1)
	expect "$name: drain over mem=32M: exit 1" 1 $?
	expect_in "$name: the refusal says how much is needed" "needs*MiB" "$out"
	expect_in "$name: the refusal points to tierctl set" "tierctl set" "$out"
	expect "$name: a refused drain moves nothing" "$stored" "$(stat_of stored_pages)"

	out=$("$tierctl" set "$mnt" mem=256M 2>&1)
	expect "$name: set mem=256M: exit 0" 0 $?
	expect_line "$name: set prints the new budget" "^mem=" "$out"
	events=$(pressure_events)
	out=$("$tierctl" drain "$mnt" 2>&1)
	rc=$?
	expect "$name: drain: exit 0" 0 $rc
	[ $rc -eq 0 ] || echo "# $out"
	expect_line "$name: drain prints a summary" "^drain: [0-9]+ pages in" "$out"
	expect_empty "$name: backend empty after the drain" "$events"
	resident=$(stat_of resident_bytes)
	data=$(stat_of data_bytes)
	filled=$(stat_of same_filled_pages)
	stored=$(stat_of stored_pages)
	# Same-filled pages are values in the page map, neither resident nor stored.
	if [ "$((resident + (filled + stored) * 4096))" -ge "$data" ]; then
		ok "$name: resident $resident + $filled same-filled + $stored stored pages cover $data"
	else
		fail "$name: resident + same-filled + stored >= data" ">= $data" \
			"$resident + $filled + $stored pages"
	fi
	expect "$name: every file byte-exact after the drain" 0 "$(nr_bad fullblock "$mnt"/f*)"

	stored=$(stat_of stored_pages)
	out=$("$tierctl" drain "$mnt" 2>&1)
	expect "$name: drain again: exit 0" 0 $?
	if [ "$stored" = 0 ]; then
		expect_line "$name: drain with nothing swapped: 0 pages" "^drain: 0 pages" "$out"
	else
		echo "# $stored pages evicted by pressure before the second drain: $out"
	fi
}

# 3: reads and writes all along a drain.
check_drain_under_io() {
	name=$1

	reclaim_all "$name: under I/O"
	rm -f "$work/io.stop" "$work/io.fail"
	(
		n=0
		while [ ! -e "$work/io.stop" ] || [ $n -lt 3 ]; do
			k=$((n % (src_mb - 2)))
			f=$mnt/f$((n % 4))
			# Rewrite a piece with what it holds, write and compare a scratch file.
			dd if="$src" of="$f" bs=1M skip=$k seek=$k count=1 conv=notrunc status=none ||
				echo "rewrite $f at $k MiB" >>"$work/io.fail"
			dd if="$src" of="$mnt/g" bs=1M skip=$k count=2 status=none ||
				echo "write g" >>"$work/io.fail"
			dd if="$src" bs=1M skip=$k count=2 status=none | cmp -s - "$mnt/g" ||
				echo "g differs at round $n" >>"$work/io.fail"
			cmp -s "$src" "$mnt/f$(((n + 1) % 4))" ||
				echo "f$(((n + 1) % 4)) differs at round $n" >>"$work/io.fail"
			n=$((n + 1))
		done
	) &
	io=$!
	sleep 0.1
	events=$(pressure_events)
	stored=$(stat_of stored_pages)
	out=$("$tierctl" drain "$mnt" 2>&1)
	rc=$?
	touch "$work/io.stop"
	wait $io
	expect "$name: drain of $stored pages under reads and writes: exit 0" 0 $rc
	[ "$stored" = 0 ] && echo "# $name: nothing was swapped out: the drain had nothing to do"
	[ $rc -eq 0 ] || echo "# $out"
	if [ -s "$work/io.fail" ]; then
		fail "$name: I/O during the drain" "no errors" "$(head -n 3 "$work/io.fail")"
	else
		ok "$name: reads and writes during the drain all exact"
	fi
	expect_empty "$name: backend empty after a drain under I/O" "$events"
	expect "$name: every file byte-exact after a drain under I/O" 0 \
		"$(nr_bad fullblock "$mnt"/f*)"
	rm -f "$mnt/g"
}

# 4: SIGINT or SIGTERM stops the drain after its batch, losing nothing.
check_drain_interrupted() {
	name=$1
	sig=$2

	reclaim_all "$name: SIG$sig"
	before=$(stat_of stored_pages)
	"$tierctl" drain "$mnt" >"$work/drain.out" 2>&1 &
	pid=$!
	sleep 0.2
	kill -"$sig" $pid 2>/dev/null
	wait $pid
	rc=$?
	out=$(cat "$work/drain.out")
	if [ $rc -eq 0 ] && [ "$before" = 0 ]; then
		echo "# $name: SIG$sig: nothing was swapped out, so nothing was stopped"
	elif [ $rc -eq 0 ]; then
		ok "$name: drain finished before SIG$sig (exit 0; the stop was not exercised)"
		echo "# $before pages swapped; $out"
	else
		expect "$name: drain stopped by SIG$sig: exit 130" 130 $rc
		expect_in "$name: SIG$sig: the summary says nothing is lost" \
			"stopped: * pages brought back, nothing lost; run again to finish" "$out"
		left=$(stat_of stored_pages)
		if [ "${left:-0}" -gt 0 ] && [ "$left" -lt "$before" ]; then
			ok "$name: SIG$sig: stopped part way ($left of $before pages left)"
		else
			fail "$name: SIG$sig: part of the pages brought back" \
				"0 < left < $before" "$left"
		fi
	fi
	[ $rc -eq 0 ] || [ $rc -eq 130 ] || echo "# $out"
	# Read without bringing back, so the next drain still has the rest to do.
	expect "$name: SIG$sig: every file byte-exact (O_DIRECT)" 0 \
		"$(nr_bad direct "$mnt"/f* "$mnt"/h*)"
	events=$(pressure_events)
	out=$("$tierctl" drain "$mnt" 2>&1)
	expect "$name: SIG$sig: a second drain finishes: exit 0" 0 $?
	expect_empty "$name: SIG$sig: backend empty after the second drain" "$events"
}

# 5: set changes the budget and the policy live, and refuses bad pairs whole.
check_set() {
	name=$1

	out=$("$tierctl" set "$mnt" mem=64M readahead=direct 2>&1)
	expect "$name: set mem=64M readahead=direct: exit 0" 0 $?
	expect_line "$name: set prints mem=" "^mem=" "$out"
	expect_line "$name: set prints memlimit=" "^memlimit=" "$out"
	expect_line "$name: set prints readahead=direct" "^readahead=direct$" "$out"
	expect "$name: mem_budget_bytes after set mem=64M" $((64 * MIB)) \
		"$(stat_of mem_budget_bytes)"
	json=$("$tierctl" stats "$mnt" --json)
	expect_in "$name: stats show readahead policy direct" \
		'"readahead":{"policy":"direct"' "$json"
	expect_in "$name: stats show readahead policy_set direct" '"policy_set":"direct"' "$json"

	# Each with a good pair after it: all or nothing.
	for bad in bogus=1 mem=abc readahead=sideways memlimit=lots; do
		out=$("$tierctl" set "$mnt" "$bad" readahead=vma 2>&1)
		expect "$name: set $bad readahead=vma: exit 1" 1 $?
		case $bad in
		bogus=*) named=bogus ;;
		*) named=${bad#*=} ;;
		esac
		expect_in "$name: set $bad: the message names '$named'" "$named" "$out"
		# As the mount option's, the message says what the value should be.
		case $bad in
		bogus=*) expect_in "$name: set $bad: the keys listed" "(size, nr_inodes," "$out" ;;
		readahead=*) expect_in "$name: set $bad: why" "want auto, direct, cluster or vma" "$out" ;;
		*) expect_in "$name: set $bad: why" ": want " "$out" ;;
		esac
	done
	out=$("$tierctl" set "$mnt" cgroup=x mem=1m 2>&1)
	expect_in "$name: set cgroup=x: why" "want a cgroup's path" "$out"

	out=$("$tierctl" set "$mnt" pool_max=1M 2>&1)
	expect "$name: set pool_max=1M on a mount with no RAM tier in a chain: exit 1" 1 $?
	expect_in "$name: set pool_max=: the message says why" "has no RAM tier" "$out"
	expect "$name: a refused set changes no budget" $((64 * MIB)) "$(stat_of mem_budget_bytes)"
	json=$("$tierctl" stats "$mnt" --json)
	expect_in "$name: a refused set changes no policy" '"policy_set":"direct"' "$json"

	# The minimums of mount, named in the message; nothing changes.
	for bad in "mem=1:mem= value '1': the minimum is 4k (one page)" \
		"mem=4095:mem= value '4095': the minimum is 4k (one page)" \
		"memlimit=1:memlimit= value '1': the minimum is 32m" \
		"cgroup=/x mem=1:mem= value '1': the minimum is 4k (one page)"; do
		pairs=${bad%%:*}
		# shellcheck disable=SC2086 # one or two pairs
		out=$("$tierctl" set "$mnt" $pairs 2>&1)
		expect "$name: set $pairs: exit 1" 1 $?
		expect "$name: set $pairs: the message" \
			"tierctl: $mnt: set: invalid ${bad#*:}" "$out"
	done
	expect "$name: no minimum refused changed the budget" $((64 * MIB)) \
		"$(stat_of mem_budget_bytes)"
	json=$("$tierctl" stats "$mnt" --json)
	case $json in
	*'"path":"/x"'*) fail "$name: set cgroup=/x mem=1 adds no tenant" "no /x" "$json" ;;
	*) ok "$name: set cgroup=/x mem=1 adds no tenant" ;;
	esac
	gib=$(awk '$1 == "MemTotal:" { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
	"$tierctl" set "$mnt" mem=200% >"$work/set.out" 2>"$work/set.err"
	expect "$name: set mem=200%: exit 0" 0 $?
	expect "$name: set mem=200%: a warning on stderr" \
		"tierctl: $mnt: warning: mem= value '200%' is more than the machine's RAM ($gib GiB)" \
		"$(cat "$work/set.err")"
	expect_line "$name: set mem=200%: the values on stdout" "^mem=[0-9]+$" "$(cat "$work/set.out")"
	"$tierctl" set "$mnt" mem=64M >/dev/null
	expect "$name: set mem=64M again: exit 0" 0 $?

	# size= and nr_inodes= live: not below what is in use.
	pages=$(($(stat_of data_bytes) / 4096))
	inodes=$(stat_of inodes)
	max_inodes=$(stat_of max_inodes)
	for bad in "size=64M:size= value '64M': too small for current use ($pages pages, $(size_text $((pages * 4096))))" \
		"nr_inodes=$((inodes - 1)):nr_inodes= value '$((inodes - 1))': too few for current use ($inodes inodes)"; do
		pair=${bad%%:*}
		out=$("$tierctl" set "$mnt" "$pair" 2>&1)
		expect "$name: set $pair: exit 1" 1 $?
		expect "$name: set $pair: the message" "tierctl: $mnt: set: invalid ${bad#*:}" "$out"
	done
	# size_bytes, not statfs: df shows the capacity where it is below size=.
	expect "$name: refused limits leave size= and statfs files" "2147483648 $max_inodes" \
		"$(stat_of size_bytes) $(stat -f -c '%c' "$mnt")"
	out=$("$tierctl" set "$mnt" size=1G nr_inodes=$inodes 2>&1)
	expect "$name: set size=1G nr_inodes=$inodes: exit 0" 0 $?
	expect_line "$name: set prints size=1G" "^size=1073741824$" "$out"
	expect "$name: statfs blocks files after the set" "262144 $inodes" \
		"$(stat -f -c '%b %c' "$mnt")"
	err=$(touch "$mnt/one-too-many" 2>&1)
	expect_in "$name: a create past the new nr_inodes fails with ENOSPC" \
		"No space left on device" "$err"
	"$tierctl" set "$mnt" size=2G nr_inodes="$max_inodes" >/dev/null
	expect "$name: size= and statfs files after setting them back" "2147483648 $max_inodes" \
		"$(stat_of size_bytes) $(stat -f -c '%c' "$mnt")"

	cat "$mnt"/f* >/dev/null # fill the budget
	"$tierctl" set "$mnt" mem=16M >/dev/null
	expect "$name: set mem=16M: exit 0" 0 $?
	i=0
	while [ $i -lt 50 ] && [ "$(stat_of resident_bytes)" -gt $((16 * MIB)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	resident=$(stat_of resident_bytes)
	if [ "$resident" -le $((16 * MIB)) ]; then
		ok "$name: resident $resident within mem=16M after $((i / 10)).$((i % 10)) s"
	else
		fail "$name: resident within 5 s of set mem=16M" "<= $((16 * MIB))" "$resident"
	fi
	expect "$name: every file byte-exact after the shrink" 0 "$(nr_bad fullblock "$mnt"/f*)"
}

# 6: another user reads the stats and changes nothing.
check_permissions() {
	name=$1

	# The mount point and a copy of tierctl must be reachable for nobody.
	chmod 755 "$work"
	cp "$tierctl" "$work/tierctl"
	chmod 755 "$work/tierctl"
	as_nobody() {
		setpriv --reuid=65534 --regid=65534 --clear-groups "$work/tierctl" "$@"
	}
	budget=$(stat_of mem_budget_bytes)
	out=$(as_nobody stats "$mnt" 2>&1)
	expect "$name: nobody: stats: exit 0" 0 $?
	expect_in "$name: nobody: stats prints the counters" "data_bytes" "$out"
	out=$(as_nobody set "$mnt" mem=1G 2>&1)
	expect "$name: nobody: set mem=1G: exit 1" 1 $?
	expect_in "$name: nobody: set: permission denied" "permission denied" "$out"
	out=$(as_nobody reclaim "$mnt" all 2>&1)
	expect "$name: nobody: reclaim all: exit 1" 1 $?
	expect_in "$name: nobody: reclaim: permission denied" "permission denied" "$out"
	out=$(as_nobody reset-peaks "$mnt" 2>&1)
	expect "$name: nobody: reset-peaks: exit 1" 1 $?
	expect_in "$name: nobody: reset-peaks: permission denied" "permission denied" "$out"
	out=$(as_nobody drain "$mnt" 2>&1)
	expect "$name: nobody: drain: exit 1" 1 $?
	expect_in "$name: nobody: drain: permission denied" "permission denied" "$out"
	expect "$name: nobody changed no budget" "$budget" "$(stat_of mem_budget_bytes)"
}

# at_least NAME A B: A >= B, both numbers.
at_least() {
	if [ "${2:-x}" -ge "${3:-0}" ] 2>/dev/null; then
		ok "$1 ($2 >= $3)"
	else
		fail "$1" ">= ${3:-?}" "${2:-none}"
	fi
}

# below NAME A B: A < B, both numbers.
below() {
	if [ "${2:-x}" -lt "${3:-0}" ] 2>/dev/null; then
		ok "$1 ($2 < $3)"
	else
		fail "$1" "< ${3:-?}" "${2:-none}"
	fi
}

# 8b: under writes, reads and eviction, no stats reply shows a peak below
# a footprint or pool an earlier reply (or the same one) showed, and the
# peaks never fall.
check_peaks_under_io() {
	name=$1

	(
		end=$(($(date +%s) + 4))
		i=0
		while [ "$(date +%s)" -lt "$end" ]; do
			cp "$src" "$mnt/io$((i % 3))" && cat "$mnt/io$(((i + 1) % 3))" >/dev/null 2>&1
			rm -f "$mnt/io$(((i + 2) % 3))"
			i=$((i + 1))
		done
		rm -f "$mnt"/io*
	) &
	io=$!
	: >"$work/peaks.json"
	for _ in $(seq 20); do
		"$tierctl" stats "$mnt" --json >>"$work/peaks.json"
		sleep 0.2
	done
	wait $io
	verdict=$(python3 - "$work/peaks.json" <<'EOF'
import json, sys
fp_seen = pool_seen = fp_peak = pool_peak = 0
bad = []
for no, line in enumerate(open(sys.argv[1]), 1):
    s = json.loads(line)
    fp_seen = max(fp_seen, s["footprint_bytes"])
    pool_seen = max(pool_seen, s["backend"]["pool_bytes"])
    want_fp, want_pool = max(fp_seen, fp_peak), max(pool_seen, pool_peak)
    if s["footprint_peak_bytes"] < want_fp:
        bad.append("%d: footprint peak %d below %d" % (no, s["footprint_peak_bytes"], want_fp))
    if s["backend"]["pool_peak_bytes"] < want_pool:
        bad.append("%d: pool peak %d below %d" % (no, s["backend"]["pool_peak_bytes"], want_pool))
    fp_peak, pool_peak = s["footprint_peak_bytes"], s["backend"]["pool_peak_bytes"]
print("; ".join(bad[:3]) if bad else "ok %d replies, peaks %d and %d" % (no, fp_peak, pool_peak))
EOF
)
	case $verdict in
	ok*) ok "$name: under I/O and eviction: no peak below what a reply showed (${verdict#ok })" ;;
	*) fail "$name: peaks under I/O and eviction" "never below a shown value" "$verdict" ;;
	esac
}

# 8: the peaks of the footprint and the pool hold after a delete and
# start again on reset-peaks; the compressor is named.
check_peaks() {
	name=$1

	json=$("$tierctl" stats "$mnt" --json)
	one() { printf '%s' "$json" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
	at_least "$name: footprint_peak_bytes >= footprint_bytes" \
		"$(one footprint_peak_bytes)" "$(one footprint_bytes)"
	at_least "$name: pool_peak_bytes >= pool_bytes" "$(one pool_peak_bytes)" "$(one pool_bytes)"
	expect_in "$name: stats name the compressor" '"compressor":"lz4"' "$json"
	expect_in "$name: stats give the compressor's level" '"compressor_level":' "$json"

	cp "$src" "$mnt/peak" && "$tierctl" reclaim "$mnt" all >/dev/null
	high=$(stat_of pool_peak_bytes)
	fp_high=$(stat_of footprint_peak_bytes)
	rm "$mnt/peak"
	low=$(stat_of pool_bytes)
	below "$name: deleting a swapped file shrinks the pool" "$low" "$high"
	at_least "$name: the pool's peak stays after the delete" "$(stat_of pool_peak_bytes)" "$high"
	out=$("$tierctl" reset-peaks "$mnt" 2>&1)
	expect "$name: reset-peaks: exit 0" 0 $?
	peak=$(stat_of pool_peak_bytes)
	below "$name: reset-peaks lowers the pool's peak" "$peak" "$high"
	at_least "$name: the peak after the reset is what is held" "$peak" "$(stat_of pool_bytes)"
	at_least "$name: the footprint's peak after the reset is no higher" \
		"$fp_high" "$(stat_of footprint_peak_bytes)"
}

# 7: requests no tierctl sends, straight to the socket.
check_malformed() {
	name=$1

	if ! command -v python3 >/dev/null; then
		echo "# skip: malformed requests need python3"
		return
	fi
	if ! python3 - "$mnt" >"$work/malformed.out" 2>&1 <<'EOF'
import os, socket, sys

st = os.stat(sys.argv[1])
prefix = "@tierfs/%d:%d/" % (os.major(st.st_dev), os.minor(st.st_dev))
address = next("\0" + line.split()[-1][1:] for line in open("/proc/net/unix")
               if line.split()[-1].startswith(prefix))
requests = {
    "an empty line": b"\n",
    "64 KiB of garbage without a newline": bytes(b for b in range(1, 256) if b != 10) * 258,
    "a line of NUL bytes": b"\0" * 100 + b"\n",
    "set": b"set\n",
    "set =": b"set =\n",
    "set mem=": b"set mem=\n",
    "drain": b"drain\n",
    "drain bogus": b"drain bogus\n",
    "reclaim -5": b"reclaim -5\n",
}


def ask(payload):
    """The daemon's reply to payload, b"" if it closed, or why it failed."""
    reply = b""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(address)
        s.sendall(payload)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
    except (BrokenPipeError, ConnectionResetError):
        pass
    except OSError as e:
        reply = ("(%s)" % e).encode()
    finally:
        s.close()
    return reply


for what, payload in requests.items():
    reply = ask(payload)
    alive = ask(b"stats\n").startswith(b"ok\n")
    if not reply.startswith(b"error:") and reply != b"":
        verdict = "bad"
    elif not alive:
        verdict, reply = "bad", reply + b" and then the daemon no longer answers stats"
    else:
        verdict = "good"
    print("%s %s: %r" % (verdict, what, reply[:100]))
EOF
	then
		fail "$name: malformed requests" "python3 exit 0" "$(tail -n 3 "$work/malformed.out")"
	fi
	while read -r verdict what; do
		case $verdict in
		good) ok "$name: malformed request ${what%%: *}: ${what#*: }" ;;
		bad) fail "$name: malformed request ${what%%: *}" "an error: reply or a close" \
			"${what#*: }" ;;
		esac
	done <"$work/malformed.out"
	out=$("$tierctl" stats "$mnt" 2>&1)
	expect "$name: the daemon still answers stats after malformed requests" 0 $?
}

check_backend() {
	name=$1
	opts=$2

	built_in "$name" "$opts" || return
	if ! "$tierfs" "$mnt" -o "size=2G,mem=32M,swapsize=1G,cache=never,$opts"; then
		fail "$name: mount" "status 0" "a failure"
		return
	fi
	if write_files f 4; then
		ok "$name: wrote $((4 * src_mb)) MiB"
	else
		fail "$name: write" "$((4 * src_mb)) MiB" "a failure"
	fi
	check_drain "$name"
	check_drain_under_io "$name"
	command -v python3 >/dev/null && check_peaks_under_io "$name"
	case $opts in
	*file:*)
		if write_files h 12; then
			ok "$name: wrote $((12 * src_mb)) MiB more"
		else
			fail "$name: write" "$((12 * src_mb)) MiB more" "a failure"
		fi
		"$tierctl" set "$mnt" mem=1G >/dev/null
		expect "$name: set mem=1G: exit 0" 0 $?
		check_drain_interrupted "$name" INT
		check_drain_interrupted "$name" TERM
		;;
	*)
		check_set "$name"
		check_permissions "$name"
		check_peaks "$name"
		check_malformed "$name"
		;;
	esac
	fusermount3 -u "$mnt"
}

# The stats count requests by opcode.  Where the kernel took
# FUSE_HANDLE_KILLPRIV_V2, buffered writes to a file send no GETXATTR of
# security.capability each (without it: one per write).
check_ops() {
	if ! "$tierfs" "$mnt"; then
		fail "ops: mount" "status 0" "a failure"
		return
	fi
	dd if=/dev/zero of="$mnt/ops" bs=4k count=64 status=none
	writes=$(stat_of write)
	xattrs=$(stat_of getxattr)
	[ "${writes:-0}" -ge 64 ] && ok "ops: ops.write counts $writes requests for 64 writes" ||
		fail "ops: ops.write" ">= 64" "${writes:-none}"
	if "$tierctl" stats "$mnt" | grep -q "suid_clearing.*KILLPRIV_V2"; then
		[ "${xattrs:-0}" -le 1 ] && ok "ops: KILLPRIV_V2: ${xattrs:-0} GETXATTR for 64 writes" ||
			fail "ops: GETXATTRs for 64 writes" "<= 1" "$xattrs"
	elif [ "$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')" -ge 5011 ]; then
		fail "ops: stats transport.suid_clearing" "KILLPRIV_V2 (kernel 5.11+ offers it)" \
			"$("$tierctl" stats "$mnt" | sed -n 's/ *suid_clearing *//p')"
	else
		nr_skipped=$((nr_skipped + 1))
		echo "skip - ops: kernels before 5.11 have no KILLPRIV_V2"
	fi
	fusermount3 -u "$mnt"
}

# tierctl list: a row per mount with the daemon's own figures, JSON a real
# parser takes, a stopped daemon's row as "-" and exit 4, a name that
# cannot break a row, and none at all in a namespace without mounts.
check_list() {
	second="$work/m 2"
	mkdir "$second"
	if ! "$tierfs" "$mnt" -o size=1G || ! "$tierfs" "$second" -o size=2G,backend=ramdisk; then
		fail "list: mount two" "status 0" "a failure"
		return
	fi
	head -c $((3 * MIB)) /dev/urandom >"$mnt/a"
	head -c $((5 * MIB)) /dev/urandom >"$second/b"
	out=$("$tierctl" list 2>&1)
	expect "list: exit 0" 0 $?
	expect_line "list: the header names the columns" \
		"^MOUNTPOINT +SIZE +DATA +RESIDENT +BUDGET +STORED +POOL +RATIO +FOOTPRINT +COMPRESSOR +BACKEND +TRANSPORT$" "$out"
	expect_line "list: a row for the zpool mount, nothing stored: no ratio" \
		"^$mnt +1\.0 GiB +3\.0 MiB +3\.0 MiB +[0-9.]+ [KMG]iB +0 B +0 B +- +[0-9.]+ MiB +lz4 +zpool +(classic|uring)$" "$out"
	expect_line "list: a row for the ramdisk mount, its space escaped" \
		"^$work/m\\\\0402 +2\.0 GiB +5\.0 MiB +5\.0 MiB +.* - +ramdisk +(classic|uring)$" "$out"
	# Other tests' mounts change meanwhile: compare this test's rows.
	ours() { printf '%s\n' "$1" | grep -F "$work/"; }
	expect "list: no command is list" "$(ours "$out")" "$(ours "$("$tierctl" 2>&1)")"
	# zramctl's --raw, +COL and --output-all; a ratio and zero pages once evicted.
	head -c $((2 * MIB)) /dev/zero >"$mnt/zeros"
	"$tierctl" reclaim "$mnt" all >/dev/null
	out=$("$tierctl" list --raw -o +zero-pages 2>&1)
	expect_line "list --raw -o +COL: one space between cells, the column added" \
		"^$mnt 1\.0GiB 5\.0MiB 0B [^ ]+ 3\.0MiB [^ ]+ [0-9]+\.[0-9]{2} [^ ]+ lz4 zpool (classic|uring) 512$" "$out"
	nr_all=$("$tierctl" list --output-all --raw | head -n 1 | wc -w)
	nr_help=$("$tierctl" list --help | sed -n '/^  columns/,$p' | grep -c '^    [A-Z]')
	expect "list --output-all: every column" "$nr_help" "$nr_all"
	rm "$mnt/zeros"
	out=$("$tierctl" -n -b -o mountpoint,data 2>&1)
	expect_line "list -n -b -o: raw bytes, no header" "^$mnt +$((3 * MIB))$" "$out"
	case $out in
	MOUNTPOINT*) fail "list -n" "no header" "$out" ;;
	*) ok "list -n: no header" ;;
	esac
	# The bash completion offers the mount points, the one with a space too.
	completion=$(dirname "$0")/../../completions/tierctl
	out=$(bash -c '. "$1"; COMP_WORDS=(tierctl stats "$2"); COMP_CWORD=2; _tierctl
		printf "%s\n" "${COMPREPLY[@]}"' sh "$completion" "$work/" 2>&1)
	expect_line "completion: tierctl stats offers the mount point" "^$mnt$" "$out"
	expect_line "completion: and the one with a space" "^$second$" "$out"
	"$tierctl" list -o mountpoint,nosuch >/dev/null 2>&1
	expect "list -o with an unknown column: exit 2" 2 $?
	if command -v python3 >/dev/null; then
		"$tierctl" list --json -o mountpoint,data,backend,compressor,peak,owner |
			python3 -c '
import json, sys
rows = {m["mountpoint"]: m for m in json.load(sys.stdin)["mounts"]}
for path, data, backend, compressor in ((sys.argv[1], 3 << 20, "zpool", "lz4"),
                                        (sys.argv[2], 5 << 20, "ramdisk", None)):
    m = rows[path]
    assert (m["data"], m["backend"], m["compressor"], m["owner"]) == \
        (data, backend, compressor, 0), m
    assert m["peak"] >= data, m
print("ok")' "$mnt" "$second" >"$work/list.out" 2>&1
		expect "list --json: parsed, both mounts with their data" ok "$(tail -n 1 "$work/list.out")"
	fi
	chmod 755 "$work"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$tierctl" list -o mountpoint,data 2>&1)
	expect_line "list: nobody sees the rows too" "^$mnt +3\.0 MiB$" "$out"

	pid=$(pgrep -n -f -- "$second")
	kill -STOP "$pid"
	out=$("$tierctl" list --timeout 1 -o mountpoint,data,backend 2>"$work/list.err")
	rc=$?
	kill -CONT "$pid"
	expect "list with a stopped daemon: exit 4" 4 $rc
	expect_line "list: the stopped daemon's row is '-'" "^$work/m\\\\0402 +- +-$" "$out"
	expect_line "list: the others still shown" "^$mnt +3\.0 MiB +zpool$" "$out"
	expect_in "list: stderr names the stopped mount" "daemon not answering" "$(cat "$work/list.err")"

	# Two stopped daemons cost the timeout once, not twice: asked at once.
	pid1=$(pgrep -n -f -- "$mnt -o size=1G")
	kill -STOP "$pid" "$pid1"
	start=$(date +%s%N)
	"$tierctl" list --timeout 1 >/dev/null 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	kill -CONT "$pid" "$pid1"
	expect "list with two stopped daemons: exit 4" 4 $rc
	if [ "$ms" -lt 1800 ]; then
		ok "list: two stopped daemons with --timeout 1 took $ms ms, one timeout"
	else
		fail "list: two stopped daemons with --timeout 1" "< 1800 ms (asked at once)" "$ms ms"
	fi

	# A namespace of its own, every tierfs mount lazily taken out of it.
	out=$(unshare -m sh -c '
		awk "\$0 ~ / - fuse(blk)?\.tierfs / { print \$5 }" /proc/self/mountinfo |
			sed "s/\\\\/\\\\0/g" |
			while read -r m; do umount -l "$(printf "%b" "$m")"; done
		"$1" list && "$1" list --json' sh "$tierctl" 2>&1)
	expect "list with no mount: nothing, then an empty JSON list" \
		"$(printf '{\n  "mounts": []\n}')" "$out"
	# A mount point with a newline makes no row of its own.
	forger="$work/nl
fake 9.9 GiB"
	mkdir "$forger"
	if "$tierfs" "$forger" -o size=1G; then
		out=$("$tierctl" list -o mountpoint,size 2>&1)
		case $out in
		*"
fake"*) fail "list: a mount point with a newline" "one escaped row" "$out" ;;
		*) ok "list: a mount point with a newline stays one row" ;;
		esac
		expect_line "list: its row, escaped as mountinfo escapes it" \
			"^$work/nl\\\\012fake\\\\0409\.9\\\\040GiB +1\.0 GiB$" "$out"
		fusermount3 -u "$forger"
	else
		fail "list: mount at a path with a newline" "status 0" "a failure"
	fi
	fusermount3 -u "$second"
	fusermount3 -u "$mnt"
}

# tierctl files: each file's pages where the test put them (resident,
# zero, swapped to each tier of a chain), the kernel's cached copy as
# fincore counts it, a total that is the daemon's own figure, one PATH,
# and what another user sees.
check_files() {
	opts="size=1G,mem=8M,backend=zpool+file:${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test-files.swap.$$"
	built_in files backend=zpool,backend=file || return
	if ! "$tierfs" "$mnt" -o "$opts"; then
		fail "files: mount" "status 0" "a failure"
		return
	fi
	mkdir "$mnt/d"
	head -c $((8 * MIB)) /dev/urandom >"$mnt/d/r"
	head -c $((2 * MIB)) /dev/zero >"$mnt/z"
	echo private >"$mnt/p"
	chmod 600 "$mnt/p"
	"$tierctl" reclaim "$mnt" all >/dev/null
	cat "$mnt/d/r" >/dev/null
	"$tierctl" reclaim "$mnt" all >/dev/null
	out=$("$tierctl" files "$mnt" --bytes 2>"$work/files.err")
	expect "files: exit 0" 0 $?
	expect_line "files: the header names the chain's tiers" \
		"^ +RESIDENT +ZERO +ZPOOL +FILE +CACHED +SIZE FILE$" "$out"
	row=$(printf '%s\n' "$out" | grep " $mnt/d/r$")
	set -- $row
	expect "files: the random file all swapped, none resident" "0 $((8 * MIB))" \
		"$1 $(($3 + $4))"
	cached=$(fincore --bytes --noheadings -o RES "$mnt/d/r" 2>/dev/null | tr -d ' ')
	expect "files: CACHED as fincore counts it" "${cached:-none}" "$5"
	row=$(printf '%s\n' "$out" | grep " $mnt/z$")
	set -- $row
	expect "files: the zero file as zero pages" "$((2 * MIB))" "$2"
	total=$(printf '%s\n' "$out" | grep ' total$')
	set -- $total
	expect "files: the total resident is the daemon's" "$(stat_of resident_bytes)" "$1"
	expect_in "files: a word on the kernel's copy" "with cache=never it keeps no copy" \
		"$(cat "$work/files.err")"
	out=$("$tierctl" files "$mnt" "$mnt/d" 2>/dev/null)
	expect "files PATH: that directory's files only" 2 "$(printf '%s\n' "$out" | wc -l)"
	chmod 755 "$work"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$tierctl" files "$mnt" 2>&1)
	expect_line "files as nobody: another's readable file, no CACHED (the kernel would not say)" \
		"^ +0 B +0 B +[0-9.]+ (B|[KM]iB) +[0-9.]+ (B|[KM]iB) +- +8\.0 MiB $mnt/d/r$" "$out"
	expect_line "files as nobody: root's private file, nothing but its size" \
		"^ +- +- +- +- +- +8 B $mnt/p$" "$out"
	fusermount3 -u "$mnt"
	rm -f "${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test-files.swap.$$"
}

# stats --prometheus: every line of the text format checked against it
# (and by promtool where there is one), the figures the JSON's, a chain's
# tiers as one family, windows and tenants as labels, base units, a HELP
# for each, a label that holds a quote, a backslash and a space; stats
# --all --prometheus with a second mount, each family once; stats --bytes
# and reclaim's units.
check_prometheus() {
	odd="$work/p\"q\\r s"
	opts="size=1G,mem=16M,backend=zpool+file:${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test-prom.swap.$$"
	built_in prometheus backend=zpool,backend=file || return
	mkdir "$odd"
	if ! "$tierfs" "$odd" -o "$opts"; then
		fail "prometheus: mount" "status 0" "a failure"
		return
	fi
	head -c $((4 * MIB)) /dev/urandom | base64 >"$odd/a"
	out=$("$tierctl" reclaim "$odd" all)
	expect_line "reclaim prints units" "^reclaimed [0-9]+\.[0-9] MiB$" "$out"
	out=$("$tierctl" reclaim "$odd" 1m --bytes)
	expect_line "reclaim --bytes prints bytes" "^reclaimed [0-9]+ bytes$" "$out"
	out=$("$tierctl" stats --bytes "$odd")
	expect_line "stats --bytes: data_bytes in bytes" "^data_bytes +[0-9]+$" "$out"
	expect_line "stats --bytes: a tenant's figures in bytes" \
		"^  / +resident [0-9]+, swapped [0-9]+, limit none" "$out"
	"$tierctl" stats "$odd" --json --prometheus >/dev/null 2>&1
	expect "stats --json --prometheus: exit 2" 2 $?
	if ! command -v python3 >/dev/null; then
		echo "# skip: the Prometheus check needs python3"
		fusermount3 -u "$odd"
		return
	fi
	"$tierctl" stats "$odd" --prometheus >"$work/prom.txt"
	expect "stats --prometheus: exit 0" 0 $?
	"$tierctl" stats "$odd" --json >"$work/prom.json"
	"$tierfs" "$mnt" -o size=64m
	echo data >"$mnt/f"
	"$tierctl" stats --all --prometheus >"$work/prom-all.txt"
	expect "stats --all --prometheus: exit 0" 0 $?
	for scrape in prom prom-all; do
		python3 - "$work/$scrape.txt" "$work/prom.json" "$odd" "$mnt" \
			>"$work/$scrape.out" 2>&1 <<'EOF'
import json, re, sys

text, stats, path = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
is_all = sys.argv[1].endswith("-all.txt")
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"(%s)\{((?:%s,?)*)\} (\S+)$" % (NAME, LABEL))
problems, families, samples, seen = [], {}, {}, set()
current = None


def unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


assert text.endswith("\n"), "no newline at the end"
for no, line in enumerate(text.split("\n")[:-1], 1):
    m = re.match(r"# (HELP|TYPE) (%s) (.+)$" % NAME, line)
    if m:
        kind, name, rest = m.groups()
        if kind == "HELP":
            if name in families:
                problems.append("%d: family %s again" % (no, name))
            if "undocumented" in rest or len(rest.split()) < 2:
                problems.append("%d: HELP that explains nothing: %s" % (no, rest))
            families[name] = None
            current = name
        elif name != current or rest not in ("counter", "gauge"):
            problems.append("%d: TYPE %s %s after HELP %s" % (no, name, rest, current))
        else:
            families[name] = rest
        continue
    m = SAMPLE.match(line)
    if not m:
        problems.append("%d: not the text format: %r" % (no, line))
        continue
    name, value = m.group(1), m.group(5)
    labels = {k: unescape(v) for k, v in re.findall(LABEL, m.group(2))}
    float(value)
    key = (name, tuple(sorted(labels.items())))
    if name != current:
        problems.append("%d: sample of %s outside its family %s" % (no, name, current))
    if key in seen:
        problems.append("%d: sample twice: %s" % (no, key))
    seen.add(key)
    if not name.startswith("tierfs_"):
        problems.append("%d: %s without the tierfs_ prefix" % (no, name))
    if families.get(name) == "counter" and not name.endswith("_total"):
        problems.append("%d: counter %s without _total" % (no, name))
    if labels.get("mountpoint") != path and not (is_all and labels.get("mountpoint")):
        problems.append("%d: mountpoint label %r" % (no, labels.get("mountpoint")))
    if re.search(r"_(us|ms|pages|kib|mib)(_total)?$", name):
        problems.append("%d: %s not in a base unit" % (no, name))
    samples[key] = float(value)


def one(name, **labels):
    labels["mountpoint"] = path
    return samples.get((name, tuple(sorted(labels.items()))))


checks = {
    "data_bytes as in the JSON": one("tierfs_data_bytes") == stats["data_bytes"],
    "a counter as in the JSON": one("tierfs_backend_stores_total") == stats["backend"]["stores"],
    "a tier's ratio as in the JSON":
    abs((one("tierfs_tier_compression_ratio", tier="zpool") or -1)
        - stats["backend"]["tiers"][0]["compression_ratio"]) < 0.001,
    "a tier family with both tiers": one("tierfs_tier_stored_bytes", tier="zpool") is not None
    and one("tierfs_tier_stored_bytes", tier="file") is not None,
    "windows by size as a label": one("tierfs_readahead_windows_total", pages="1") is not None,
    "the root tenant as a label": one("tierfs_cgroup_resident_bytes", cgroup="/") is not None,
    "microseconds as seconds": one("tierfs_transport_poll_seconds") is not None,
    "pages as bytes": one("tierfs_reclaim_inactive_bytes")
    == stats["reclaim"]["inactive_pages"] * 4096,
    "the other mount too, if all": not is_all or
    samples.get(("tierfs_data_bytes", (("mountpoint", sys.argv[4]),))) is not None,
    "ops by opcode": (one("tierfs_ops_total", op="write") or 0) > 0,
    "info names the compressor": any(n == "tierfs_info" and ("backend_compressor", "lz4") in l
                                     for n, l in seen),
}
problems += ["wrong: " + what for what, good in checks.items() if not good]
print("\n".join(problems[:5]) if problems else
      "ok %d families, %d samples" % (len(families), len(samples)))
EOF
		out=$(tail -n 5 "$work/$scrape.out")
		case $out in
		ok*) ok "$scrape: the text format, line by line: ${out#ok }" ;;
		*) fail "$scrape" "the text format" "$out" ;;
		esac
		# Debian's promtool: scripts/check unpacks it and names it here.
		promtool=${TIERFS_PROMTOOL:-$(command -v promtool)}
		if [ -z "$promtool" ]; then
			nr_skipped=$((nr_skipped + 1))
			echo "skip - $scrape: promtool check metrics: no promtool"
		elif out=$("$promtool" check metrics <"$work/$scrape.txt" 2>&1); then
			ok "$scrape: promtool check metrics finds nothing"
		else
			fail "$scrape: promtool check metrics" "nothing" "$(echo "$out" | head -n 5)"
		fi
	done
	fusermount3 -u "$mnt"
	fusermount3 -u "$odd"
}

check_usage
check_list
check_files
check_prometheus
check_backend zpool "backend=zpool"
check_backend file "backend=file:${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test-ctl.swap.$$"
# The peaks again with a memory limit in force (the budget's limit path).
if ! command -v python3 >/dev/null; then
	echo "# skip: the peaks under memlimit= need python3"
elif "$tierfs" "$mnt" -o size=1G,mem=32M,memlimit=96m,cache=never; then
	check_peaks_under_io "zpool, memlimit=96m"
	fusermount3 -u "$mnt"
else
	fail "peaks under memlimit=96m: mount" "status 0" "a failure"
fi
check_ops

finish
