#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What systemd and a config file drive: tierfs --config FILE (options a
# line each, mountpoint=, a later -o overriding it, a wrong line named by
# file and line with nothing mounted), readiness told over NOTIFY_SOCKET
# only once the mount serves, STOPPING on SIGTERM, and systemd-analyze
# verify of the shipped unit and the example mount, metrics service and
# timer units (skipped without systemd-analyze), and the unit's system call
# filter against a trace of the daemon (skipped without strace).
#
# usage: mnt_systemd.sh TIERFS TIERCTL SOURCE_DIR
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse).

set -u
tierfs=$1
tierctl=$2
source_dir=$3

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "'$2'" "'$3'"; fi
}

is_mounted() { grep -q " $mnt fuse" /proc/self/mounts; }

# 1. A config file: comments, blanks, a comma list, the mount point.
conf=$work/vol.conf
cat >"$conf" <<EOF
# a volume
size=64m

  mem=8m , backend=ramdisk
mountpoint=$mnt
nosuid,nodev,noexec
EOF
if "$tierfs" --config "$conf"; then
	expect "config: size, budget and backend from the file" "64.0 MiB 8.0 MiB ramdisk" \
		"$("$tierctl" list -n -o mountpoint,size,budget,backend | grep -F "$mnt " |
			sed 's/^[^ ]* *//; s/  */ /g')"
	flags=$(grep " $mnt " /proc/self/mounts | cut -d' ' -f4)
	case ,$flags, in
	*,nosuid,*nodev,*noexec,*) ok "config: nosuid,nodev,noexec reach the kernel ($flags)" ;;
	*) fail "config: kernel flags" "nosuid,nodev,noexec" "$flags" ;;
	esac
	fusermount3 -u "$mnt"
else
	fail "config: mount" "status 0" "a failure"
fi

# 2. A later -o overrides the file, and an argument the file's mount point.
if "$tierfs" --config "$conf" -o size=32m "$mnt"; then
	expect "config: a later -o overrides the file" "32.0 MiB" \
		"$("$tierctl" list -n -o mountpoint,size | grep -F "$mnt " | sed 's/^[^ ]* *//')"
	fusermount3 -u "$mnt"
else
	fail "config then -o: mount" "status 0" "a failure"
fi

# 3. A wrong line: the file and the line named, nothing mounted.
printf 'size=64m\n# fine\nmem=8q\nmountpoint=%s\n' "$mnt" >"$conf"
err=$("$tierfs" --config "$conf" 2>&1)
expect "config: a wrong line fails: exit 1" 1 $?
case $err in
*"$conf:3: invalid mem= value '8q'"*) ok "config: the message names file and line ($err)" ;;
*) fail "config: the message" "$conf:3: invalid mem= ..." "$err" ;;
esac
is_mounted && fail "config: a wrong line" "nothing mounted" "a mount" ||
	ok "config: a wrong line mounts nothing"
err=$("$tierfs" --config "$work/none.conf" 2>&1)
expect "config: a missing file: exit 1" 1 $?
case $err in
*"$work/none.conf"*"No such file"*) ok "config: the message names the missing file" ;;
*) fail "config: a missing file's message" "its path and why" "$err" ;;
esac
printf 'size=64m\n' >"$conf"
err=$("$tierfs" --config "$conf" 2>&1)
expect "config without a mount point: exit 1" 1 $?

# 4. sd_notify: READY=1 once the mount serves, STOPPING=1 on SIGTERM.
if command -v python3 >/dev/null; then
	sock=$work/notify.sock
	python3 - "$sock" "$work/notify.log" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "a") as log:
    for _ in range(2):
        log.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        log.flush()
EOF
	listener=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	NOTIFY_SOCKET=$sock "$tierfs" "$mnt" -f -o size=16m &
	daemon=$!
	i=0
	while ! grep -q READY=1 "$work/notify.log" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	ready=$(head -n 1 "$work/notify.log" 2>/dev/null)
	case $ready in
	*READY=1*) ok "notify: READY=1 ($ready)" ;;
	*) fail "notify" "READY=1" "'$ready'" ;;
	esac
	# Ready means served: the stats answer at once, without a retry.
	"$tierctl" stats "$mnt" --timeout 1 >/dev/null 2>&1
	expect "notify: the control channel answers once READY=1 came" 0 $?
	pid=$(printf '%s\n' "$ready" | sed -n 's/.*MAINPID=\([0-9]*\).*/\1/p')
	expect "notify: MAINPID is the daemon" tierfs "$(cat /proc/"${pid:-0}"/comm 2>/dev/null)"
	kill -TERM "${pid:-$daemon}"
	wait "$daemon"
	expect "notify: SIGTERM: the daemon exits 0" 0 $?
	wait "$listener"
	stopping=$(sed -n 2p "$work/notify.log")
	case $stopping in
	*STOPPING=1*) ok "notify: STOPPING=1 on SIGTERM" ;;
	*) fail "notify: on SIGTERM" "STOPPING=1" "'$stopping'" ;;
	esac
	is_mounted && fail "notify: after SIGTERM" "unmounted" "still mounted" ||
		ok "notify: SIGTERM unmounts"
else
	nr_skipped=$((nr_skipped + 1))
	echo "skip - notify: needs python3"
fi

# 5. The unit's privileges: no new privileges and only its capability
# bounding set still mount, serve and unmount (the rest of its hardening is
# seccomp and cgroup policy, which only systemd applies).
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$source_dir/debian/tierfs@.service" |
	tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
if command -v setpriv >/dev/null && [ -n "$caps" ]; then
	if setpriv --no-new-privs --bounding-set "-all,$caps" --inh-caps "-all" \
		"$tierfs" "$mnt" -o size=16m; then
		echo data >"$mnt/f" && [ "$(cat "$mnt/f")" = data ] &&
			ok "the unit's capabilities ($caps) and no_new_privs: it mounts and serves" ||
			fail "the unit's capabilities: a write and read" "data" "$(cat "$mnt/f" 2>&1)"
		"$tierctl" stats "$mnt" >/dev/null 2>&1
		expect "the unit's capabilities: the control channel answers" 0 $?
		fusermount3 -u "$mnt"
	else
		fail "the unit's capabilities ($caps) and no_new_privs" "a mount" "a failure"
	fi
else
	nr_skipped=$((nr_skipped + 1))
	echo "skip - the unit's capabilities: no setpriv or no CapabilityBoundingSet="
fi

# 6. The shipped units, as systemd reads them.
if command -v systemd-analyze >/dev/null; then
	units=$work/units
	mkdir -p "$units"
	# An instance of the template, run from this build, with its config.
	sed "s|/usr/bin/tierfs|$(realpath "$tierfs")|" "$source_dir/debian/tierfs@.service" \
		>"$units/tierfs@mnt-systemd-test.service"
	cp "$source_dir/examples/srv-scratch.mount" "$source_dir/examples/tierfs-metrics.service" \
		"$source_dir/examples/tierfs-metrics.timer" "$units/"
	for unit in "$units/tierfs@mnt-systemd-test.service" "$units/srv-scratch.mount" \
		"$units/tierfs-metrics.service" "$units/tierfs-metrics.timer"; do
		out=$(systemd-analyze verify --man=no "$unit" 2>&1)
		rc=$?
		if [ $rc -eq 0 ] && [ -z "$out" ]; then
			ok "systemd-analyze verify $(basename "$unit")"
		else
			fail "systemd-analyze verify $(basename "$unit")" "exit 0, no word" \
				"exit $rc: $out"
		fi
	done
	out=$(grep -E '^(MemoryLimit|Type|ExecStart)=' "$source_dir/debian/tierfs@.service")
	case $out in
	*MemoryLimit=*) fail "the unit" "no MemoryLimit= (deprecated)" "$out" ;;
	*Type=notify*"--config /etc/tierfs/%i.conf"*) ok "the unit: Type=notify, --config" ;;
	*) fail "the unit" "Type=notify and --config /etc/tierfs/%i.conf" "$out" ;;
	esac
	# The example config mounts as it is, at a mount point of the test's.
	sed "s|^mountpoint=.*|mountpoint=$mnt|" "$source_dir/examples/scratch.conf" >"$conf"
	if "$tierfs" --config "$conf"; then
		ok "the example config mounts"
		fusermount3 -u "$mnt"
	else
		fail "the example config" "a mount" "a failure"
	fi
else
	nr_skipped=$((nr_skipped + 1))
	echo "skip - units: no systemd-analyze"
fi

# 7. The unit's SystemCallFilter= refuses nothing the daemon calls: the
# daemon traced through a mount with every page evicted to the chain's
# file, read back, tierctl's requests and the unmount, its system calls
# against the groups the unit denies.
unit_file=$source_dir/debian/tierfs@.service
denied=$(sed -n 's/^SystemCallFilter=~//p' "$unit_file")
swap_file=${TIERFS_SWAP_DIR:-/var/tmp}/tierfs-test-systemd.swap.$$
if ! command -v strace >/dev/null || ! command -v systemd-analyze >/dev/null; then
	nr_skipped=$((nr_skipped + 1))
	echo "skip - the unit's system call filter: no strace or systemd-analyze"
elif [ -z "$denied" ]; then
	fail "the unit's system call filter" "a SystemCallFilter=~ line" "none"
elif ! built_in "the unit's system call filter" backend=zpool+file; then
	:
else
	strace -f -qq -o "$work/strace" "$tierfs" "$mnt" -f \
		-o "mem=4m,backend=zpool+file:$swap_file" 2>/dev/null &
	tracer=$!
	wait_for_mount() {
		for _ in $(seq 100); do
			grep -q " $mnt fuse" /proc/self/mounts && return 0
			sleep 0.1
		done
		return 1
	}
	if wait_for_mount; then
		head -c 16m /dev/urandom | base64 >"$work/data"
		cp "$work/data" "$mnt/f"
		"$tierctl" reclaim "$mnt" all >/dev/null
		cmp -s "$work/data" "$mnt/f" || fail "traced mount: read back" "the data" "a difference"
		"$tierctl" stats "$mnt" --prometheus >/dev/null
		fusermount3 -u "$mnt"
	fi
	wait "$tracer"
	rm -f "$swap_file"
	called=$(sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$work/strace" | sort -u)
	# shellcheck disable=SC2086 # the groups are words
	refused=$(systemd-analyze syscall-filter $denied | sed -n 's/^ *\([a-z_0-9]*\)$/\1/p' |
		sort -u)
	hit=$(printf '%s\n' "$called" | grep -xF "$refused")
	if [ "$(printf '%s\n' "$called" | wc -l)" -lt 20 ]; then
		fail "the unit's system call filter" "a trace of the daemon" "$(head -c 300 "$work/strace")"
	elif [ -z "$hit" ]; then
		ok "the unit's system call filter refuses none of the $(printf '%s\n' "$called" |
			wc -l) system calls the daemon made"
	else
		fail "the unit's system call filter" "none of the daemon's calls" "$(echo $hit)"
	fi
fi

finish
