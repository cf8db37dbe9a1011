#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The redis backend through a real mount, against servers started here on
# loopback ports.  A plain Redis: 1 GiB of mixed data through zpool+redis
# with mem=64M, byte-exact; what the server holds is sealed; a drain; no key
# left after rm and unmount; a killed daemon's keys expire, and a stopped
# one logs that its own did; a full server
# (maxmemory, noeviction) makes writes fail with ENOSPC and loses nothing; a
# stopped server is EIO for the pages it had and for nothing else, the mount
# up and the errors counted; a paused server (SIGSTOP) holds up neither an rm
# of a swapped file nor another user's read of a resident one, and has the
# rm's deletes once it resumes, and an unmount takes a few redis_timeout= at
# most; credentials from a file only root can read,
# refused from a file others can, and the data out of reach of user nobody;
# a server that wants none is warned of at mount.
# Three tiers, zpool+redis+file: what the server refuses (full) or fails
# (stopped) goes to the swap file, byte-exact, and a drain empties both.
# A cluster of 3 masters and no replica, one paused while the deletes of
# an rm wait for it: the keys on the other two are re-armed all the while.
# A cluster of 3 masters with 2 replicas each found from one seed: keys routed
# with no redirect, a master killed mid-run with redis_wait=1 and its
# replica taking over, every byte back.
#
# usage: mnt_redis.sh TIERFS TIERCTL
# Exits 0 pass, 1 fail, 77 skip (not root, no /dev/fuse, no redis backend
# or redis-server).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"
built_in redis backend=redis || { finish; exit; }
# shellcheck source=tests/redis/servers.sh
. "$(dirname "$0")/../redis/servers.sh"
trap 'cleanup; redis_stop_all' EXIT

src=$work/src
mixed_data "$src"
want=$(md5 "$src")

# One value of the stats JSON: json_of PYTHON-EXPRESSION on s.
json_of() {
	"$tierctl" stats "$mnt" --json | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1"
}

check_exact() {
	bad=0
	for f in "$@"; do
		[ "$(md5 "$f")" = "$want" ] || bad=$((bad + 1))
	done
	[ "$bad" -eq 0 ] && ok "$label: $# files read back exact" || fail "$label: read back" "0 bad" "$bad"
}

expect_eq() { [ "$2" = "$3" ] && ok "$1: $3" || fail "$1" "$2" "$3"; }
expect_gt() { [ "$3" -gt "$2" ] 2>/dev/null && ok "$1: $3" || fail "$1" "more than $2" "$3"; }

# Unmount, and wait for the daemon to end: on its way out it deletes the mount's keys.
unmount() {
	pid=$(daemon_pid)
	fusermount3 -u "$mnt"
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

daemon_pid() {
	for p in $(pgrep -f -- "$mnt"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = tierfs ] && echo "$p"
	done
}

# ---- a plain Redis ----
port=$(redis_free_port)
redis_start "$port" || exit 1
seed=127.0.0.1:$port
label=plain

if "$tierfs" -o "mem=64m,pool_max=16m,backend=zpool+redis://$seed,redis_ttl=60" "$mnt"; then
	for i in $(seq 16); do cp "$src" "$mnt/f$i"; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	expect_eq "$label: backend.name" zpool+redis "$(json_of 's["backend"]["name"]')"
	expect_eq "$label: the last tier" redis "$(json_of 's["backend"]["tiers"][1]["name"]')"
	stored=$(json_of 's["backend"]["tiers"][1]["stored_pages"]')
	expect_gt "$label: pages in redis" 100000 "$stored"
	expect_eq "$label: one node, holding them" "1 $stored" \
		"$(json_of 'str(len(s["backend"]["nodes"])) + " " + str(s["backend"]["nodes"][0]["stored_pages"])')"
	expect_gt "$label: keys on the server" 0 "$(redis_dbsize)"
	ttl=$(redis-cli -p "$port" ttl "$(redis-cli -p "$port" --scan | head -n 1)")
	[ "$ttl" -gt 0 ] && [ "$ttl" -le 60 ] && ok "$label: a key's time to live: $ttl s" ||
		fail "$label: a key's time to live" "1 to 60 s" "$ttl"
	# Text pages go out compressed, and lz4 keeps runs of words: sealed, none shows.
	found=0
	for key in $(redis-cli -p "$port" --scan | head -n 20); do
		redis-cli -p "$port" --raw hvals "$key" | grep -q -a 'that with as' && found=$((found + 1))
	done
	expect_eq "$label: keys whose values show the text" 0 "$found"
	check_exact "$mnt"/f*
	# A drain needs room for what it brings back: one file kept, the budget raised.
	rm -f "$mnt"/f[1-9]?
	rm -f "$mnt"/f[2-9]
	"$tierctl" set "$mnt" mem=256m >/dev/null
	if "$tierctl" drain "$mnt" >/dev/null 2>"$work/drain.err"; then
		ok "$label: tierctl drain"
	else
		fail "$label: tierctl drain" "exit 0" "$(cat "$work/drain.err")"
	fi
	expect_eq "$label: pages in redis after the drain" 0 \
		"$(json_of 's["backend"]["tiers"][1]["stored_pages"]')"
	label="plain, drained"
	echo 3 >/proc/sys/vm/drop_caches
	check_exact "$mnt"/f*
	for _ in $(seq 50); do [ "$(redis_dbsize)" = 0 ] && break; sleep 0.1; done
	expect_eq "$label: keys left on the server" 0 "$(redis_dbsize)"
	rm -f "$mnt"/f*
	unmount
	expect_eq "$label: keys left after rm and unmount" 0 "$(redis_dbsize)"
else
	fail "$label: mount" "status 0" "a failure"
fi

# Without a seal the data shows: the check above can fail.  Random base64
# does not compress, so its pages go out as they are and a run of it taken
# from the middle is in some value, whichever pages lz4 and the scan order
# would have left out of a check on the text.
label="encrypt=off"
base64 -w 0 </dev/urandom | head -c 8M >"$work/b64"
marker=$(tail -c +$(((5 << 20) + 100)) "$work/b64" | head -c 32)
if "$tierfs" -o "mem=16m,backend=redis://$seed,encrypt=off" "$mnt"; then
	cp "$work/b64" "$mnt/b64"
	cp "$src" "$mnt/f1"
	sync
	found=0
	for key in $(redis-cli -p "$port" --scan); do
		redis-cli -p "$port" --raw hvals "$key" | grep -q -a -F -- "$marker" && found=$((found + 1))
	done
	expect_eq "$label: keys whose values hold a run of the data" 1 "$found"
	fusermount3 -u "$mnt"
fi

# A daemon killed: its keys outlive it by redis_ttl= at most.
label="killed daemon"
if "$tierfs" -o "mem=16m,backend=redis://$seed,redis_ttl=3" "$mnt"; then
	cp "$src" "$mnt/f1"
	sync
	expect_gt "$label: keys while it runs" 0 "$(redis_dbsize)"
	kill -9 "$(daemon_pid)"
	fusermount3 -u -z "$mnt" 2>/dev/null
	sleep 4
	expect_eq "$label: keys 4 s after, with redis_ttl=3" 0 "$(redis_dbsize)"
fi

# A daemon stopped (SIGSTOP) past redis_ttl=: its keys expire, as they must
# for a dead one, and it says so when it goes on.
label="stopped daemon"
"$tierfs" -f -o "mem=16m,backend=redis://$seed,redis_ttl=3" "$mnt" 2>"$work/log" &
for _ in $(seq 50); do grep -q " $mnt " /proc/self/mounts && break; sleep 0.1; done
cp "$src" "$mnt/f1"
sync
kill -STOP "$(daemon_pid)"
sleep 4
kill -CONT "$(daemon_pid)"
for _ in $(seq 30); do grep -q "past redis_ttl=3 s" "$work/log" && break; sleep 0.1; done
grep -q "past redis_ttl=3 s" "$work/log" && ok "$label: the loss logged when it goes on" ||
	fail "$label: the log" "a line saying the keys were not re-armed in time" "$(cat "$work/log")"
fusermount3 -u "$mnt"
wait

# A full server: stores refused, writes fail with ENOSPC, nothing lost.
label="maxmemory"
redis-cli -p "$port" config set maxmemory 48mb >/dev/null
redis-cli -p "$port" config set maxmemory-policy noeviction >/dev/null
if "$tierfs" -o "mem=32m,backend=zpool+redis://$seed,pool_max=8m,size=1g" "$mnt"; then
	full=0 done_files=
	for i in $(seq 12); do
		if dd if="$src" of="$mnt/f$i" bs=1M conv=fsync status=none 2>"$work/dd.err"; then
			done_files="$done_files $mnt/f$i"
		else
			full=$i
			break
		fi
	done
	[ "$full" -gt 0 ] && grep -q "No space left" "$work/dd.err" &&
		ok "$label: file $full failed with ENOSPC" ||
		fail "$label: a write past the server's memory" "ENOSPC" "$(cat "$work/dd.err") at file $full"
	# shellcheck disable=SC2086
	check_exact $done_files
	expect_gt "$label: stores the server refused" 0 "$(json_of 's["backend"]["reject_full"]')"
	rm -f "$mnt"/f*
	fusermount3 -u "$mnt"
fi
redis-cli -p "$port" config set maxmemory 0 >/dev/null

# The server stopped: EIO for what it had, the rest served, errors counted.
label="server stopped"
if "$tierfs" -o "mem=32m,backend=redis://$seed,redis_timeout=300" "$mnt"; then
	cp "$src" "$mnt/gone"
	head -c 4m "$src" >"$work/small"
	cp "$work/small" "$mnt/small"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	redis_kill "$port"
	if cat "$mnt/gone" >/dev/null 2>"$work/cat.err"; then
		fail "$label: reading evicted pages" "EIO" "success"
	else
		grep -q "Input/output error" "$work/cat.err" && ok "$label: reading evicted pages: EIO" ||
			fail "$label: reading evicted pages" "EIO" "$(cat "$work/cat.err")"
	fi
	[ "$(md5 "$mnt/small")" = "$(md5 "$work/small")" ] &&
		ok "$label: a resident file reads back" || fail "$label: a resident file" "exact" "not"
	# No room without eviction: ENOSPC, not EIO; room again once a file goes.
	if dd if="$src" of="$mnt/more" bs=1M count=48 conv=fsync status=none 2>"$work/dd.err"; then
		fail "$label: a write that needs eviction" "ENOSPC" "success"
	else
		grep -q "No space left" "$work/dd.err" && ok "$label: a write that needs eviction: ENOSPC" ||
			fail "$label: a write that needs eviction" "ENOSPC" "$(cat "$work/dd.err")"
	fi
	rm -f "$mnt/gone" "$mnt/more"
	cp "$work/small" "$mnt/small2" && [ "$(md5 "$mnt/small2")" = "$(md5 "$work/small")" ] &&
		ok "$label: after rm, a new file written and read back" ||
		fail "$label: after rm, a new file" "written and read back" "an error"
	expect_gt "$label: load errors counted" 0 "$(json_of 's["backend"]["load_errors"]')"
	expect_eq "$label: the node" down "$(json_of 's["backend"]["nodes"][0]["state"]')"
	fusermount3 -u "$mnt"
fi

# Three tiers: the swap file takes what the server turns away, full or
# stopped; a drain empties redis and the file; nothing is lost.
label="three tiers"
redis_start "$port" --maxmemory 32mb --maxmemory-policy noeviction || exit 1
if "$tierfs" -o "mem=32m,pool_max=8m,size=2g,redis_timeout=300,backend=zpool+redis://$seed+file:$work/swap" "$mnt"; then
	for i in 1 2 3 4 5 6; do cp "$src" "$mnt/f$i"; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	expect_eq "$label: backend.name" zpool+redis+file "$(json_of 's["backend"]["name"]')"
	expect_eq "$label: the tiers" "zpool redis file" \
		"$(json_of '" ".join(t["name"] for t in s["backend"]["tiers"])')"
	expect_gt "$label: pages in redis" 1000 "$(json_of 's["backend"]["tiers"][1]["stored_pages"]')"
	expect_gt "$label: pages redis turned away, full" 0 \
		"$(json_of 's["backend"]["tiers"][1]["rejects_full"]')"
	expect_gt "$label: pages in the file" 1000 "$(json_of 's["backend"]["tiers"][2]["stored_pages"]')"
	check_exact "$mnt"/f*
	"$tierctl" set "$mnt" mem=512m >/dev/null
	if "$tierctl" drain "$mnt" >/dev/null 2>"$work/drain.err"; then
		ok "$label: tierctl drain"
	else
		fail "$label: tierctl drain" "exit 0" "$(cat "$work/drain.err")"
	fi
	expect_eq "$label: pages in redis and the file after the drain" "0 0" \
		"$(json_of '"%d %d" % (s["backend"]["tiers"][1]["stored_pages"], s["backend"]["tiers"][2]["stored_pages"])')"
	check_exact "$mnt"/f*
	rm -f "$mnt"/f*
	for _ in $(seq 50); do [ "$(redis_dbsize)" = 0 ] && break; sleep 0.1; done
	expect_eq "$label: keys left after rm" 0 "$(redis_dbsize)"
	# The server stopped: the stores it fails go to the file.
	"$tierctl" set "$mnt" mem=32m >/dev/null
	redis_kill "$port"
	label="three tiers, server stopped"
	for i in 1 2; do cp "$src" "$mnt/g$i"; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	check_exact "$mnt"/g*
	expect_gt "$label: pages sent on by a failing redis" 0 \
		"$(json_of 's["backend"]["tiers"][1]["rejects_error"]')"
	expect_gt "$label: pages in the file" 1000 "$(json_of 's["backend"]["tiers"][2]["stored_pages"]')"
	rm -f "$mnt"/g*
	fusermount3 -u "$mnt"
else
	fail "$label: mount" "status 0" "a failure"
fi

# A server that stops answering (SIGSTOP, a hung host): an rm of a swapped
# file does not wait for it, and a resident file of another user is read
# meanwhile as fast as ever; resumed, the server has the rm's deletes.
label="server paused"
now_ms() { date +%s%3N; }
redis_start "$port" || exit 1
if "$tierfs" -o "mem=16m,backend=redis://$seed,redis_timeout=1000" "$mnt" 2>"$work/err"; then
	# A server that takes commands from anyone: said at mount.
	grep -q "warning: .*127.0.0.1:$port answers without a password" "$work/err" &&
		ok "$label: a server without a password, warned of" ||
		fail "$label: a server without a password" "a warning" "$(cat "$work/err")"
	cp "$src" "$mnt/swapped"
	chmod 755 "$work"
	mkdir "$mnt/other"
	chown 65534:65534 "$mnt/other"
	nobody sh -c "head -c 1m /dev/urandom >'$mnt/other/resident'"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	expect_gt "$label: pages in redis" 5000 "$(json_of 's["backend"]["stored_pages"]')"
	redis_pause "$port"
	(
		t0=$(now_ms)
		rm "$mnt/swapped"
		echo $(($(now_ms) - t0)) >"$work/rm_ms"
	) &
	rm_pid=$!
	sleep 0.2
	read_ms=$(nobody sh -c 't0=$(date +%s%3N); cat "$1" >/dev/null || exit; echo $(($(date +%s%3N) - t0))' \
		sh "$mnt/other/resident")
	wait "$rm_pid"
	rm_ms=$(cat "$work/rm_ms")
	[ "$rm_ms" -lt 500 ] && ok "$label: rm of a swapped file: $rm_ms ms" ||
		fail "$label: rm of a swapped file, redis_timeout=1000" "under 500 ms" "$rm_ms ms"
	[ -n "$read_ms" ] && [ "$read_ms" -lt 250 ] && ok "$label: nobody reads a resident file: $read_ms ms" ||
		fail "$label: nobody reads a resident file" "under 250 ms" "${read_ms:-an error} ms"
	redis_resume "$port"
	for _ in $(seq 50); do [ "$(redis_dbsize)" = 0 ] && break; sleep 0.1; done
	expect_eq "$label: keys left after rm, resumed" 0 "$(redis_dbsize)"
	chmod 700 "$work"
	# Unmount with the server paused: the daemon is gone within a few
	# redis_timeout= (a store under way, then the deletes of the keys).
	cp "$src" "$mnt/swapped"
	sync
	redis_pause "$port"
	pid=$(daemon_pid)
	t0=$(now_ms)
	fusermount3 -u "$mnt"
	while kill -0 "$pid" 2>/dev/null && [ $(($(now_ms) - t0)) -lt 120000 ]; do sleep 0.05; done
	unmount_ms=$(($(now_ms) - t0))
	# A sanitizer build frees slower and checks for leaks at exit: the
	# release build is the one that tells a bounded unmount from 19 s.
	# It took 2.2 to 7.2 s (a batch or more of deletes waiting out
	# redis_timeout= each, more on a loaded machine).
	bound_ms=10000
	[ "${TIERFS_SANITIZED:-none}" = none ] || bound_ms=20000
	[ "$unmount_ms" -lt "$bound_ms" ] && ok "$label: unmount, the daemon gone in $unmount_ms ms" ||
		fail "$label: unmount, redis_timeout=1000" "the daemon gone within $bound_ms ms" \
			"$unmount_ms ms"
	redis_resume "$port"
else
	fail "$label: mount" "status 0" "$(cat "$work/err")"
fi
redis_kill "$port"

# Credentials from a file: root's alone, or the mount is refused.
label=auth
port=$(redis_free_port 1)
redis_start "$port" --requirepass "s3cret-$$" || exit 1
seed=127.0.0.1:$port
printf 's3cret-%s\n' "$$" >"$work/auth"
chmod 644 "$work/auth"
if "$tierfs" -o "mem=16m,backend=redis://$seed,redis_auth=$work/auth" "$mnt" 2>"$work/err"; then
	fail "$label: a mode 644 redis_auth= file" "refused" "mounted"
	fusermount3 -u "$mnt"
else
	grep -q "redis_auth=$work/auth" "$work/err" && ok "$label: mode 644 refused, naming the file" ||
		fail "$label: mode 644" "a message naming redis_auth=" "$(cat "$work/err")"
fi
if "$tierfs" -o "mem=16m,backend=redis://$seed" "$mnt" 2>"$work/err"; then
	fail "$label: no redis_auth= for a server that wants a password" "refused" "mounted"
	fusermount3 -u "$mnt"
else
	grep -q "wants a password: give it in redis_auth=" "$work/err" &&
		ok "$label: no redis_auth= for a server that wants one: refused, saying so" ||
		fail "$label: no redis_auth=" "a message asking for it" "$(cat "$work/err")"
fi
chmod 600 "$work/auth"
chmod 755 "$work"
if "$tierfs" -o "mem=16m,backend=redis://$seed,redis_auth=$work/auth" "$mnt" 2>"$work/err"; then
	grep -q "without a password" "$work/err" &&
		fail "$label: a server with a password" "no warning" "$(cat "$work/err")" ||
		ok "$label: a server with a password, no warning"
	cp "$src" "$mnt/f1"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	label="auth" check_exact "$mnt/f1"
	nobody cat "$work/auth" >/dev/null 2>&1 && fail "$label: nobody reads the auth file" "EACCES" "read" ||
		ok "$label: nobody cannot read the auth file"
	reply=$(nobody redis-cli -p "$port" --scan 2>&1 | head -n 1)
	case $reply in
	*NOAUTH*) ok "$label: nobody's commands refused by the server" ;;
	*) fail "$label: nobody's SCAN" "NOAUTH" "$reply" ;;
	esac
	fusermount3 -u "$mnt"
fi
redis_kill "$port"
chmod 700 "$work"

# ---- a cluster of 3 masters and no replica, serving its slots with one down ----
# A master paused while the deletes of an rm wait for it: the keys on the
# other two are re-armed all the while, and three times redis_ttl= later
# they hold every page the mount counts there.
label="cluster, a master paused"
redis_ports=
if redis_cluster 3 0; then
	for p in $redis_cluster_ports; do
		redis-cli -p "$p" config set cluster-require-full-coverage no >/dev/null
	done
	# shellcheck disable=SC2086
	set -- $redis_cluster_ports
	paused=$1
	shift
	# The fields (pages) the masters named hold.
	fields_up() {
		n=0
		for p; do
			for key in $(redis-cli -p "$p" --scan --pattern 'tfs:*'); do
				n=$((n + $(redis-cli -p "$p" hlen "$key")))
			done
		done
		echo "$n"
	}
	if "$tierfs" -o "mem=16m,backend=redis://${redis_seeds%%,*},redis_ttl=3,redis_timeout=1000" "$mnt"; then
		cp "$src" "$mnt/kept"
		cp "$src" "$mnt/gone"
		sync
		expect_gt "$label: pages on the other masters" 0 "$(fields_up "$@")"
		redis_pause "$paused"
		rm "$mnt/gone"
		sleep 9
		counted=$(json_of 'sum(n["stored_pages"] for n in s["backend"]["nodes"] if not n["name"].endswith(":'"$paused"'"))')
		expect_gt "$label: pages of the kept file the mount has on the other masters" 0 "$counted"
		got=$(fields_up "$@")
		[ "$got" -ge "$counted" ] && ok "$label: 9 s later, redis_ttl=3, they still hold them: $got" ||
			fail "$label: 9 s later, redis_ttl=3, the other masters' pages" "$counted or more" "$got"
		redis_resume "$paused"
		fusermount3 -u "$mnt"
	else
		fail "$label: mount" "status 0" "a failure"
	fi
	# Gone with their cluster's config, so that the next cluster may have their ports.
	for p in $redis_cluster_ports; do
		redis_kill "$p"
		rm -rf "${redis_dir:?}/$p"
	done
else
	fail "$label: redis-cli --cluster create" "a cluster" "none"
fi

# ---- a cluster of 3 masters, 2 replicas each (one left after a failover, for redis_wait=1) ----
label=cluster
redis_ports=
if redis_cluster 3 2; then
	first=${redis_seeds%%,*}
	if "$tierfs" -o "mem=64m,pool_max=8m,backend=zpool+redis://$first,redis_wait=1,redis_timeout=20000" "$mnt"; then
		for i in 1 2 3 4; do cp "$src" "$mnt/f$i"; done
		sync
		expect_eq "$label: masters found from one seed" 3 \
			"$(json_of 'sum(n["state"] == "master" for n in s["backend"]["nodes"])')"
		expect_eq "$label: redirects" 0 \
			"$(json_of 'sum(n["redirects"] for n in s["backend"]["nodes"])')"
		# The tier and its nodes, from one answer, once writeback is still.
		for _ in $(seq 50); do
			both=$(json_of '"%d %d" % (s["backend"]["tiers"][1]["stored_pages"],
				sum(n["stored_pages"] for n in s["backend"]["nodes"]))')
			[ -n "$both" ] && [ "${both% *}" = "${both#* }" ] && break
			sleep 0.2
		done
		expect_gt "$label: pages in the tier" 10000 "${both% *}"
		expect_eq "$label: the nodes hold the tier's pages" "${both% *}" "${both#* }"
		expect_eq "$label: every master holds some" 3 \
			"$(json_of 'sum(n["stored_pages"] > 0 for n in s["backend"]["nodes"])')"
		# The master of the first page's key dies; its replica takes over.
		victim=$(json_of 'max(s["backend"]["nodes"], key=lambda n: n["stored_pages"])["name"]')
		redis_kill "${victim##*:}"
		for i in 5 6 7 8; do cp "$src" "$mnt/f$i"; done
		sync
		echo 3 >/proc/sys/vm/drop_caches
		label="cluster, master $victim killed"
		check_exact "$mnt"/f*
		expect_eq "$label: the dead node" down \
			"$(json_of '[n for n in s["backend"]["nodes"] if n["name"] == "'"$victim"'"][0]["state"]')"
		expect_eq "$label: its failovers" 1 \
			"$(json_of '[n for n in s["backend"]["nodes"] if n["name"] == "'"$victim"'"][0]["failovers"]')"
		expect_eq "$label: masters serving" 3 \
			"$(json_of 'sum(n["state"] == "master" for n in s["backend"]["nodes"])')"
		expect_eq "$label: load errors" 0 "$(json_of 's["backend"]["load_errors"]')"
		rm -f "$mnt"/f*
		unmount
		expect_eq "$label: keys left after rm and unmount" 0 "$(redis_dbsize)"
	else
		fail "$label: mount" "status 0" "a failure"
	fi
else
	fail "$label: redis-cli --cluster create" "a cluster" "none"
fi

finish
