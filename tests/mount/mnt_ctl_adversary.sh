#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The control channel against hostile users: a squatter (user nobody)
# that binds the names first neither stops, delays nor impersonates the
# daemon; nor do 9000 names of three users listed before the daemon's,
# each never accepting; a client trickling a byte a second and 200 idle
# ones delay no tierctl call, nor do 20 uids with 16 idle connections
# each; SIGTERM and fusermount3 -u finish within 2 s beside a slow client,
# and an immediate new mount gets its channel; a cgroup named with a quote
# leaves stats --json valid; the root directory's uid= gives no right to
# change settings; a stopped or killed daemon is "not answering", a killed
# one at once even when another user holds its name; a stopped daemon
# whose mount went away holds up no tierctl call to the mount now on its
# minor.
#
# usage: mnt_ctl_adversary.sh TIERFS TIERCTL
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse, no python3).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

# An interpreter nobody may run too: not one under root's home.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || { echo "skip: no python3"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }

# Reachable for nobody: the work directory, tierctl and the clients.
chmod 755 "$work"
cp "$tierctl" "$work/tierctl"
cp "$(dirname "$0")/ctl_clients.py" "$work/clients.py"
chmod 755 "$work/tierctl" "$work/clients.py"
pids=""

stop_clients() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
}
trap 'stop_clients; cleanup' EXIT

expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "$2" "$3"; fi
}

# expect_below NAME MAX_MS GOT_MS
expect_below() {
	if [ "$3" -lt "$2" ]; then ok "$1: $3 ms"; else fail "$1" "under $2 ms" "$3 ms"; fi
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# client [nobody|uid=UID] KIND ARGS...: start a hostile client, wait for "ready".
# Started straight, not through a function, so that $! is the client
# itself and its stderr is not the harness's, which would wait for it.
client() {
	fifo=$work/ready.fifo
	rm -f "$fifo"
	mkfifo "$fifo"
	client_uid=
	case $1 in
	nobody) client_uid=65534 ;;
	uid=*) client_uid=${1#uid=} ;;
	esac
	if [ -n "$client_uid" ]; then
		shift
		setpriv --reuid="$client_uid" --regid="$client_uid" --clear-groups \
			"$python" "$work/clients.py" "$@" >"$fifo" 2>>"$work/clients.err" &
	else
		"$python" "$work/clients.py" "$@" >"$fifo" 2>>"$work/clients.err" &
	fi
	pids="$pids $!"
	read -r line <"$fifo"
	rm -f "$fifo"
	[ "$line" = ready ] || fail "client $*" "ready" "'$line' ($(tail -n 1 "$work/clients.err"))"
}

# The name the daemon serving the mount at $mnt listens at (without the
# "@"): the one whose pid is a tierfs.
daemon_name() {
	dev=$(awk -v m="$mnt" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo)
	for name in $(awk '{ print $NF }' /proc/net/unix | grep "^@tierfs/$dev/"); do
		p=$(echo "$name" | cut -d/ -f3)
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		tierfs*) echo "${name#@}"; return ;;
		esac
	done
}

# The pid of the daemon serving the mount at $mnt, from its socket name.
daemon_pid() { daemon_name | cut -d/ -f3; }

# wait_gone PID MS: until PID has exited, or MS have passed; prints the ms.
wait_gone() {
	start=$(now_ms)
	while is_running "$1" && [ $(($(now_ms) - start)) -lt "$2" ]; do
		sleep 0.02
	done
	echo $(($(now_ms) - start))
}

# Whether PID runs: a zombie has exited, whenever its reaper comes by (a
# daemon's is init, which in some sandboxes takes a second or two).
is_running() {
	[ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null
}

# 1. A squatter that bound the names first.
client nobody squat
start=$(now_ms)
"$tierfs" "$mnt" -o size=256M,mem=64M,backend=zpool || { fail "mount beside a squatter" 0 $?; finish; exit; }
ls "$mnt" >/dev/null
expect_below "squatter: mount and first ls" 1000 $(($(now_ms) - start))
out=$("$tierctl" stats "$mnt" 2>&1)
expect "squatter: tierctl stats: exit 0" 0 $?
case $out in
*IMPOSTOR*) fail "squatter: tierctl stats" "the daemon's counters" "the impostor's text" ;;
*data_bytes*) ok "squatter: tierctl stats reaches the real daemon" ;;
*) fail "squatter: tierctl stats" "the daemon's counters" "$out" ;;
esac
out=$(as_nobody "$work/tierctl" stats "$mnt" 2>&1)
case $out in
*IMPOSTOR*) fail "squatter: nobody's tierctl stats" "the daemon's counters" "the impostor's text" ;;
*data_bytes*) ok "squatter: nobody's tierctl stats reaches the real daemon" ;;
*) fail "squatter: nobody's tierctl stats" "the daemon's counters" "$out" ;;
esac

# 1b. Three users (nobody and two subuids) with 3000 names each under the
# mount's prefix, half of them with the daemon's pid in, all on the
# daemon's hash chain and bound after it, so that /proc/net/unix lists them
# first; each listens with a full backlog and never accepts.
stop_clients
for uid in 65534 100000 100001; do
	client "uid=$uid" flood "$mnt" 3000
done
worst=0
nr_ok=0
for _ in 1 2 3 4 5; do
	start=$(now_ms)
	if out=$("$tierctl" stats "$mnt" 2>&1); then
		nr_ok=$((nr_ok + 1))
	else
		echo "# $out"
	fi
	took=$(($(now_ms) - start))
	[ $took -gt $worst ] && worst=$took
done
expect "stats beside 9000 others' names, of 5" 5 "$nr_ok"
expect_below "stats beside 9000 others' names, worst of 5" 1000 $worst
start=$(now_ms)
out=$(as_nobody "$work/tierctl" stats "$mnt" 2>&1)
took=$(($(now_ms) - start))
case $out in
*data_bytes*) ok "nobody's stats beside 9000 others' names" ;;
*) fail "nobody's stats beside 9000 others' names" "the daemon's counters" "$out" ;;
esac
expect_below "nobody's stats beside 9000 others' names" 1000 $took
stop_clients

# 2. A trickling client and 200 idle ones, of nobody and of root.
client nobody trickle "$mnt"
client nobody idle "$mnt" 200
client idle "$mnt" 200
worst=0
for _ in 1 2 3 4 5; do
	start=$(now_ms)
	"$tierctl" stats "$mnt" >/dev/null
	rc=$?
	took=$(($(now_ms) - start))
	[ $rc -eq 0 ] || fail "stats beside slow clients" "exit 0" "exit $rc"
	[ $took -gt $worst ] && worst=$took
	sleep 0.6
done
expect_below "stats beside a trickler and 400 idle clients, worst of 5" 1000 $worst
start=$(now_ms)
out=$("$tierctl" set "$mnt" mem=48M 2>&1)
expect "set beside slow clients: exit 0" 0 $?
expect_below "set beside slow clients" 1000 $(($(now_ms) - start))
start=$(now_ms)
ls "$mnt" >/dev/null && echo x >"$mnt/f" && cat "$mnt/f" >/dev/null
expect_below "file requests beside slow clients" 1000 $(($(now_ms) - start))
refused=$(stat_of refused_uid)
if [ "${refused:-0}" -gt 0 ]; then
	ok "nobody's connections past 16 refused ($refused)"
else
	fail "control.refused_uid" "> 0" "${refused:-none}"
fi

# 2b. 20 uids (one user's subuids) with 16 connections each: together
# they may fill all but the slots kept for root and the owner, and their
# changes never queue.
stop_clients
client uids "$mnt" 100000 20
nr_ok=0
for _ in 1 2 3 4 5; do
	"$tierctl" stats "$mnt" >/dev/null 2>&1 && "$tierctl" set "$mnt" mem=48M >/dev/null 2>&1 &&
		nr_ok=$((nr_ok + 1))
	sleep 0.3
done
expect "stats and set beside 320 connections of 20 uids, of 5" 5 "$nr_ok"
refused=$(stat_of refused_total)
if [ "${refused:-0}" -gt 0 ]; then
	ok "the others' connections past all but the reserved slots refused ($refused)"
else
	fail "control.refused_total" "> 0" "${refused:-none}"
fi
stop_clients

# 3. Tenant paths with a quote, and one that tries to add keys.
"$tierctl" set "$mnt" 'cgroup=/rel"q' mem=1M >/dev/null
expect "set cgroup=/rel\"q mem=1M: exit 0" 0 $?
"$tierctl" set "$mnt" 'cgroup=/x","y":"' mem=1M >/dev/null
expect "set cgroup=/x\",\"y\":\" mem=1M: exit 0" 0 $?
memcg=/sys/fs/cgroup/memory/tierfs-test-rel\"q-$$
if mkdir "$memcg" 2>/dev/null; then
	echo $((64 << 20)) >"$memcg/memory.limit_in_bytes"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if=/dev/zero of="$2" bs=1M count=2 status=none' \
		sh "$memcg" "$mnt/tenant" && ok "a write from cgroup $(basename "$memcg")"
fi
if "$tierctl" stats "$mnt" --json | "$python" -m json.tool >"$work/stats.json" 2>"$work/json.err"; then
	ok "stats --json parses with quotes in cgroup paths"
else
	fail "stats --json with quotes in cgroup paths" "valid JSON" "$(cat "$work/json.err")"
fi
keys=$("$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["path"] for c in d["cgroups"])), "y" in d)' "$work/stats.json")
case $keys in
*'/rel"q'*'/x","y":"'*False) ok "paths kept whole, no key injected: $keys" ;;
*) fail "cgroup paths in the JSON" "/rel\"q and /x\",\"y\":\" as paths, no key y" "$keys" ;;
esac
rm -f "$mnt/tenant"
[ -d "$memcg" ] && rmdir "$memcg" 2>/dev/null

# 4. SIGSTOP: not answering, within the timeout.
pid=$(daemon_pid)
kill -STOP "$pid"
start=$(now_ms)
out=$("$tierctl" --timeout 1 stats "$mnt" 2>&1)
rc=$?
took=$(($(now_ms) - start))
kill -CONT "$pid"
expect "stopped daemon: exit 4" 4 $rc
case $out in
*"not answering"*) ok "stopped daemon: \"$out\"" ;;
*) fail "stopped daemon: the message" "daemon not answering" "$out" ;;
esac
expect_below "stopped daemon: tierctl --timeout 1 gives up" 1500 $took
"$tierctl" stats "$mnt" >/dev/null
expect "after SIGCONT: stats exit 0" 0 $?

# 5. fusermount3 -u beside a slow client: the daemon goes, a new mount answers.
stop_clients
client nobody squat
client trickle "$mnt"
sleep 0.3
pid=$(daemon_pid)
fusermount3 -u "$mnt"
took=$(wait_gone "$pid" 5000)
expect_below "fusermount3 -u beside a trickler: daemon gone" 2000 "$took"
"$tierfs" "$mnt" -o size=64M || fail "immediate remount" "exit 0" "exit $?"
start=$(now_ms)
out=$("$tierctl" stats "$mnt" 2>&1)
expect "immediate remount: stats exit 0" 0 $?
expect_below "immediate remount: stats" 1000 $(($(now_ms) - start))

# 6. The root directory's uid= gives no right to change settings.
fusermount3 -u "$mnt"
"$tierfs" "$mnt" -o size=64M,mem=32M,uid=65534,gid=65534 || fail "mount uid=65534" "exit 0" "exit $?"
budget=$(stat_of mem_budget_bytes)
out=$(as_nobody "$work/tierctl" set "$mnt" mem=100% memlimit=0 2>&1)
expect "uid=65534: nobody's set mem=100% memlimit=0: exit 1" 1 $?
case $out in
*"permission denied"*) ok "uid=65534: nobody's set: permission denied" ;;
*) fail "uid=65534: nobody's set" "permission denied" "$out" ;;
esac
expect "uid=65534: the budget is unchanged" "$budget" "$(stat_of mem_budget_bytes)"
out=$(as_nobody "$work/tierctl" stats "$mnt" 2>&1)
expect "uid=65534: nobody may read the stats" 0 $?

# 7. A killed daemon: not answering, not "not a tierfs mount"; at once,
# though nobody took its name and never accepts.
name=$(daemon_name)
pid=$(daemon_pid)
kill -KILL "$pid"
wait_gone "$pid" 2000 >/dev/null
out=$("$tierctl" stats "$mnt" 2>&1)
expect "killed daemon: exit 4" 4 $?
case $out in
*"not answering"*) ok "killed daemon: \"$out\"" ;;
*) fail "killed daemon: the message" "daemon not answering" "$out" ;;
esac
client nobody takeover "$name"
start=$(now_ms)
out=$("$tierctl" stats "$mnt" 2>&1)
rc=$?
took=$(($(now_ms) - start))
expect "killed daemon, its name taken: exit 4" 4 $rc
case $out in
*"none listens"*) ok "killed daemon, its name taken: \"$out\"" ;;
*) fail "killed daemon, its name taken: the message" "daemon not answering (none listens)" "$out" ;;
esac
expect_below "killed daemon, its name taken: tierctl gives up" 1000 $took
stop_clients
fusermount3 -u "$mnt"

# 8. SIGTERM to a -f daemon beside a slow client.
"$tierfs" "$mnt" -f -o size=64M 2>"$work/daemon.err" &
fg=$!
i=0
while [ $i -lt 100 ] && ! "$tierctl" --timeout 0.2 stats "$mnt" >/dev/null 2>&1; do
	sleep 0.05
	i=$((i + 1))
done
client trickle "$mnt"
client idle "$mnt" 50
sleep 0.5
start=$(now_ms)
kill -TERM $fg
wait $fg
rc=$?
took=$(($(now_ms) - start))
expect "SIGTERM beside slow clients: exit 0" 0 $rc
expect_below "SIGTERM beside slow clients: unmounted and exited" 2000 $took
if grep -q " $mnt " /proc/self/mounts; then
	fail "SIGTERM: unmounted" "no mount" "still mounted"
else
	ok "SIGTERM: unmounted"
fi
stop_clients

# 9. A stopped daemon whose mount went away (umount -l) still holds
# /dev/fuse and its name under the mount's MAJ:MIN; the next mount
# usually gets the same minor.  root's tierctl reaches the new daemon.
mount_dev() { awk -v m="$mnt" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo; }
stale=
for _ in 1 2 3; do
	"$tierfs" "$mnt" -o size=64M || fail "mount for the stale daemon" "exit 0" "exit $?"
	dev=$(mount_dev)
	stale="$stale $(daemon_pid)"
	kill -STOP $stale
	umount -l "$mnt"
	"$tierfs" "$mnt" -o size=64M || fail "mount beside a stale daemon" "exit 0" "exit $?"
	[ "$(mount_dev)" = "$dev" ] && break
	fusermount3 -u "$mnt"
done
if [ "$(mount_dev)" = "$dev" ]; then
	worst=0
	nr_ok=0
	for _ in 1 2 3 4 5; do
		start=$(now_ms)
		"$tierctl" stats "$mnt" >/dev/null 2>&1 && nr_ok=$((nr_ok + 1))
		took=$(($(now_ms) - start))
		[ $took -gt $worst ] && worst=$took
	done
	expect "stats beside a stopped daemon on the same minor $dev, of 5" 5 "$nr_ok"
	expect_below "stats beside a stopped daemon on the same minor, worst of 5" 1000 $worst
else
	fail "a mount on the stale daemon's minor" "$dev" "$(mount_dev), 3 times"
fi
# shellcheck disable=SC2086 # a list of pids
kill -KILL $stale
fusermount3 -u "$mnt"
finish
