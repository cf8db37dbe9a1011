# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Shared by the shell mount tests (sourced after setting tierfs and
# tierctl): skip where no mount is possible, a work directory with a mount
# point that is unmounted and removed on exit, ok/fail/skip counters, cases
# skipped for a backend or compressor the build left out, and tierctl's
# counters.

[ "$(id -u)" = 0 ] || { echo "skip: not root"; exit 77; }
( exec 3<>/dev/fuse ) 2>/dev/null || { echo "skip: /dev/fuse cannot be opened"; exit 77; }

. "$(dirname "$(realpath "$0")")/transport.sh"
transport_wrap "$tierfs"
tierfs=$wrapped

work=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-test.XXXXXX") || exit 1
mnt=$work/mnt
mkdir "$mnt"
nr_passed=0
nr_failed=0
nr_skipped=0

cleanup() {
	if grep -q " $mnt " /proc/self/mounts; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

ok() { nr_passed=$((nr_passed + 1)); echo "ok - $1"; }
fail() { nr_failed=$((nr_failed + 1)); echo "FAIL - $1: expected $2, got $3"; }

# built_in CASE OPTIONS: whether this build has the backend= (each tier of a
# chain) and compressor= that the mount options OPTIONS name; if not, CASE
# is skipped with a line saying why.  meson lists what is built in
# TIERFS_BACKENDS_BUILT and TIERFS_COMPRESSORS_BUILT; run by hand, tierfs
# --help says.
built_in() {
	for built_opt in $(printf '%s\n' "$2" | tr , '\n' |
		sed -n 's/^\(backend\|compressor\)=\([^:]*\).*/\1=\2/p' | sed 's/+/\nbackend=/g'); do
		case $built_opt in
		backend=none) continue ;;
		backend=*) built_list=${TIERFS_BACKENDS_BUILT-} ;;
		*) built_list=${TIERFS_COMPRESSORS_BUILT-} ;;
		esac
		[ -n "$built_list" ] || built_list=$("$tierfs" --help 2>&1 |
			sed -n "s/^built in:.* ${built_opt%%=*}=\([^;]*\).*/\1/p")
		case " $built_list " in
		*" ${built_opt#*=} "*) ;;
		*)
			nr_skipped=$((nr_skipped + 1))
			echo "skip - $1: $built_opt not built in"
			return 1
			;;
		esac
	done
}

# One number of tierctl stats --json, by key (the first match).
stat_of() {
	"$tierctl" stats "$mnt" --json | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" | head -n 1
}

md5() { md5sum <"$1" | cut -d' ' -f1; }

# expect_counted NAME KEY WHAT: tierctl's counter KEY is above 0.
expect_counted() {
	counted=$(stat_of "$2")
	if [ "${counted:-0}" -gt 0 ]; then
		ok "$1: $counted $3"
	else
		fail "$1: $2" "> 0" "${counted:-none}"
	fi
}

# mixed_data FILE: 64 MiB in 1 MiB pieces: zero pages, text, pages half
# random and half zero (they compress to about half), random, text.
mixed_data() {
	python3 - "$1" <<'PY'
import os, random, sys
words = b"the of and to in is was for on that with as by at from his it an were are".split()
rng = random.Random(7)
with open(sys.argv[1], "wb") as f:
    for i in range(64):
        for _ in range(256):
            if i % 5 == 0:
                f.write(bytes(4096))
            elif i % 5 == 2:
                f.write(os.urandom(2048) + bytes(2048))
            elif i % 5 == 3:
                f.write(os.urandom(4096))
            else:
                f.write(b" ".join(rng.choice(words) for _ in range(1200))[:4096])
PY
}

# The last line, and the exit status: 77 when every case was skipped.
finish() {
	echo "$nr_passed passed, $nr_failed failed, $nr_skipped skipped"
	[ "$nr_failed" -eq 0 ] || return 1
	[ "$nr_passed" -gt 0 ] || [ "$nr_skipped" -eq 0 ] || return 77
}

# A limit test's surroundings: skip in a sanitizer build (its quarantine and
# shadow are not the daemon's data) and without a cgroup v1 memory
# controller; then in_cg runs "$@" inside the cgroup "$cg", and unmount_cg
# unmounts and removes "$cg" once the daemon has left it (it frees what it
# holds first, which takes a while on a loaded machine).
require_memcg_limits() {
	case "${TIERFS_SANITIZED:-none}" in
	none) ;;
	*) echo "skip: a sanitizer build's memory use (quarantine, shadow) breaks any limit"; exit 77 ;;
	esac
	memcg_root=/sys/fs/cgroup/memory
	[ -w "$memcg_root/cgroup.procs" ] || { echo "skip: no cgroup v1 memory controller"; exit 77; }
}

in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }

# mount_in_cg NAME LIMIT_BYTES OPTIONS [DAEMON]: a fresh cgroup "$cg" of that
# limit, and the daemon (DAEMON, else $tierfs) started in it with its
# warnings dropped; fails, and the case is skipped, if the build left out
# the backend.
mount_in_cg() {
	built_in "$1" "$3" || return
	mkdir "$cg" && echo "$2" >"$cg/memory.limit_in_bytes" || {
		fail "$1: cgroup" "created" "an error"
		return 1
	}
	in_cg "${4:-$tierfs}" "$mnt" -o "$3" 2>/dev/null && return
	fail "$1: mount -o $3" "status 0" "a failure"
	rmdir "$cg"
	return 1
}

# check_no_oom NAME: the OOM killer has not been in "$cg".
check_no_oom() {
	kills=$(sed -n 's/^oom_kill //p' "$cg/memory.oom_control")
	[ "${kills:-0}" -eq 0 ] && ok "$1: no OOM kill" || fail "$1: OOM kills" 0 "$kills"
}

unmount_cg() {
	fusermount3 -u "$mnt"
	for _ in $(seq 300); do rmdir "$cg" 2>/dev/null && return; sleep 0.1; done
	fail "unmount: the daemon's exit" "within 30 s" "pids $(tr '\n' ' ' <"$cg/cgroup.procs")still there"
}
