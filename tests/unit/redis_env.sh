#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a test or bench command against a plain Redis and then a 3-master cluster, each
# started here (TIERFS_TEST_REDIS names it), and fails if any key is left on
# them afterwards; with --cluster first, against the cluster alone.  Without
# redis-server the command runs once, without redis.
# usage: redis_env.sh [--cluster] COMMAND [ARGS...]
set -u
only_cluster=
[ "${1:-}" = --cluster ] && only_cluster=1 && shift
if ! command -v redis-server >/dev/null; then
	echo "# redis-server not installed: the redis backend is not tested"
	exec "$@"
fi
. "$(dirname "$(realpath "$0")")/../redis/servers.sh"
trap redis_stop_all EXIT
rc=0
# A command that skips (77) is skipped as a whole.
run() {
	"$@"
	st=$?
	[ $st -eq 77 ] && exit 77
	[ $st -eq 0 ] || rc=1
}
if [ -z "$only_cluster" ]; then
	port=$(redis_free_port)
	redis_start "$port" || exit 1
	echo "# plain Redis on 127.0.0.1:$port"
	export TIERFS_TEST_REDIS=127.0.0.1:$port
	run "$@"
	left=$(redis_dbsize)
	[ "$left" = 0 ] || { echo "FAIL - $left keys left on the plain server"; rc=1; }
	redis_kill "$port"
	redis_ports=
fi
redis_cluster 3 0 || exit 1
echo "# a cluster of 3 masters: $redis_seeds"
export TIERFS_TEST_REDIS=$redis_seeds
run "$@"
left=$(redis_dbsize)
[ "$left" = 0 ] || { echo "FAIL - $left keys left on the cluster"; rc=1; }
exit $rc
