# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Redis servers for the tests, on loopback ports, in $redis_dir (made
# here, removed by redis_stop_all): one plain server, or a cluster made with
# redis-cli --cluster create.  Sourced; exits 77 where redis-server is not
# installed.

command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	{ echo "skip: redis-server or redis-cli not installed"; exit 77; }

redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-redis.XXXXXX") || exit 1
redis_ports=

# A free port with its cluster bus port (10000 up) free too, both below the
# kernel's ephemeral range: a bus port inside it can be taken at any moment
# by an outgoing connection (of a node, redis-cli or tierfs), which no check
# of listening sockets sees.  An offset of our own spreads concurrent runs.
redis_free_port() {
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	span=$((lo - 10000 - 11000))
	[ "$span" -ge 1000 ] || span=10000
	p=$((11000 + ($$ * 7 + ${1:-0} * 53) % span))
	while ss -Htan "( sport = :$p or sport = :$((p + 10000)) )" 2>/dev/null | grep -q . ||
		echo "$redis_ports" | grep -qw "$p"; do
		p=$((11000 + (p - 11000 + 1) % span))
	done
	echo "$p"
}

# redis_start PORT [ARGS...]: a server on 127.0.0.1:PORT, up when it returns.
redis_start() {
	port=$1
	shift
	mkdir -p "$redis_dir/$port"
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$redis_dir/$port" --logfile "$redis_dir/$port/log" \
		--pidfile "$redis_dir/$port/pid" --daemonize yes "$@" >/dev/null || return 1
	redis_ports="$redis_ports $port"
	for _ in $(seq 100); do
		redis-cli -p "$port" ping 2>&1 | grep -q -E 'PONG|NOAUTH' && return 0
		sleep 0.05
	done
	echo "redis-server on port $port did not start:"
	cat "$redis_dir/$port/log"
	return 1
}

# redis_kill PORT: the server there dies (SIGKILL), as a crashed host.
redis_kill() {
	[ -f "$redis_dir/$1/pid" ] && kill -9 "$(cat "$redis_dir/$1/pid")" 2>/dev/null
	rm -f "$redis_dir/$1/pid"
}

# redis_pause PORT, redis_resume PORT: the server stops answering (SIGSTOP),
# as a host that hangs: connections are still accepted and requests
# queue; then it goes on (SIGCONT) and serves them.
redis_pause() { kill -STOP "$(cat "$redis_dir/$1/pid")"; }
redis_resume() { kill -CONT "$(cat "$redis_dir/$1/pid")"; }

# redis_cluster MASTERS REPLICAS: a cluster; sets redis_seeds
# (HOST:PORT,...) and redis_cluster_ports, masters first.
redis_cluster() {
	nr_masters=$1
	nr_replicas=$2
	n=$((nr_masters * (1 + nr_replicas)))
	redis_cluster_ports=
	for i in $(seq "$n"); do
		p=$(redis_free_port "$i")
		redis_start "$p" --cluster-enabled yes --cluster-config-file nodes.conf \
			--cluster-node-timeout 1000 || return 1
		redis_cluster_ports="$redis_cluster_ports $p"
	done
	# shellcheck disable=SC2086
	set -- $redis_cluster_ports
	redis_seeds=$(for p; do printf '127.0.0.1:%s,' "$p"; done)
	redis_seeds=${redis_seeds%,}
	# shellcheck disable=SC2046
	redis-cli --cluster create $(for p; do printf '127.0.0.1:%s ' "$p"; done) \
		--cluster-replicas "$nr_replicas" --cluster-yes >"$redis_dir/create.log" 2>&1 || {
		cat "$redis_dir/create.log"
		return 1
	}
	redis_cluster_wait
}

# redis_cluster_wait: until every live node says the cluster is ok.
redis_cluster_wait() {
	for _ in $(seq 200); do
		all_ok=1
		for p in $redis_cluster_ports; do
			[ -f "$redis_dir/$p/pid" ] || continue
			redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' ||
				all_ok=0
		done
		[ "$all_ok" = 1 ] && return 0
		sleep 0.1
	done
	echo "the cluster did not become ok"
	return 1
}

# redis_dbsize: keys on all live servers (masters and replicas: count masters once).
redis_dbsize() {
	total=0
	for p in $redis_ports; do
		[ -f "$redis_dir/$p/pid" ] || continue
		role=$(redis-cli -p "$p" role 2>/dev/null | head -1)
		[ "$role" = master ] || continue
		total=$((total + $(redis-cli -p "$p" dbsize)))
	done
	echo "$total"
}

redis_stop_all() {
	for p in $redis_ports; do
		redis_kill "$p"
	done
	rm -rf "$redis_dir"
}
