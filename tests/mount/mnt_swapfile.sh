#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The swap file's path and seals through a real mount: a symlink, a
# directory others may write to and a file someone else made are refused
# by name before anything is mounted, with what to do instead (for names
# another user took first in a sticky directory: the directory itself);
# with encrypt=on no evicted text can be found in the swap file, with
# encrypt=off it can; bytes overwritten in the swap file make the reads of
# those pages fail with EIO, counted, and nothing else; auto readahead
# reads ahead with cache=never only.
#
# usage: mnt_swapfile.sh TIERFS TIERCTL
# Exits 0 pass, 1 fail, 77 skip (not root, no usable /dev/fuse).

set -u
tierfs=$1
tierctl=$2

# shellcheck source=tests/mount/lib.sh
. "$(dirname "$0")/lib.sh"

# refused NAME PATH WHY [BACKEND]: a mount with backend=BACKEND (file:PATH)
# must fail before anything is mounted, with a message that names the
# option and the path and says why.
refused() {
	name=$1
	path=$2
	why=$3
	spec=${4:-file:$path}

	if out=$("$tierfs" "$mnt" -o "size=16M,mem=1M,swapsize=16M,backend=$spec" 2>&1); then
		fail "$name: refused" "a failed mount" "mounted"
		fusermount3 -u "$mnt"
		return
	fi
	if grep -q " $mnt " /proc/self/mounts; then
		fail "$name: refused before mounting" "no mount" "a mount left"
		fusermount3 -u "$mnt"
	fi
	case $out in
	*"backend=$spec: "*"$why"*) ok "$name: refused: $out" ;;
	*) fail "$name: message" "backend=$spec: ... $why" "$out" ;;
	esac
}

mkdir "$work/target"
ln -s "$work/target" "$work/link"
refused "symlinked directory" "$work/link" "$work/link is a symlink: refusing to follow it"
ln -s "$work/target/swap" "$work/filelink"
refused "symlinked file" "$work/filelink" "$work/filelink is a symlink: refusing to follow it"

mkdir "$work/open"
chown 65534:65534 "$work/open"
chmod 0777 "$work/open"
refused "directory of nobody's, mode 0777" "$work/open/swap" \
	"$work/open is owned by uid 65534, not by root"
chown 0:0 "$work/open"
refused "directory of root's, mode 0777" "$work/open/swap" \
	"$work/open is writable by others and not sticky"
chmod 01777 "$work/open"
if "$tierfs" "$mnt" -o "size=16M,mem=1M,swapsize=16M,backend=file:$work/open/swap"; then
	ok "sticky directory, mode 1777: mounted"
	fusermount3 -u "$mnt"
else
	fail "sticky directory, mode 1777" "a mount" "a failure"
fi

truncate -s 1T "$work/target/premade"
chown 65534:65534 "$work/target/premade"
refused "a file of nobody's" "$work/target/premade" \
	"$work/target/premade is owned by uid 65534, not by root"

# A directory all may write to, as /var/tmp, where nobody took the names
# first: a file, and a symlink to a file of root's.  Each mount is refused
# before anything is mounted, naming the option, the path, the owner and
# what to do instead; neither file is touched; the directory itself, where
# the swap file has no name, mounts.
shared=$work/shared
mkdir "$shared"
chmod 1777 "$shared"
chmod 755 "$work"
echo "root's own" >"$work/rootfile"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
echo "nobody's" | as_nobody tee "$shared/x.swap" >/dev/null &&
	as_nobody ln -s "$work/rootfile" "$shared/y.swap" ||
	fail "nobody's names in $shared" "made" "not made"
files_state() {
	stat -c '%n %s %Y %Z %u %i' "$shared/x.swap" "$work/rootfile"
	md5 "$shared/x.swap"
	md5 "$work/rootfile"
}
before=$(files_state)
for spec in "file:$shared/x.swap" "zpool+file:$shared/x.swap"; do
	refused "$spec, a file of nobody's in a sticky directory" "$shared/x.swap" \
		"$shared/x.swap is owned by uid 65534, not by root: another user made it, so it is not used; remove it, or name the directory instead (file:$shared)" \
		"$spec"
done
for spec in "file:$shared/y.swap" "zpool+file:$shared/y.swap"; do
	refused "$spec, nobody's symlink to a file of root's" "$shared/y.swap" \
		"$shared/y.swap is a symlink owned by uid 65534, not by root: refusing to follow it; remove it, or name the directory instead (file:$shared)" \
		"$spec"
done
after=$(files_state)
if [ "$before" = "$after" ]; then
	ok "nobody's file and root's file untouched"
else
	fail "nobody's file and root's file" "untouched: $before" "$after"
fi
if "$tierfs" "$mnt" -o "size=16M,mem=1M,swapsize=16M,backend=file:$shared"; then
	ok "the sticky directory itself beside nobody's names: mounted"
	entries=$(find "$shared" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')
	if [ "$entries" = "x.swap y.swap " ]; then
		ok "no name of the swap file in $shared"
	else
		fail "entries of $shared" "x.swap y.swap" "$entries"
	fi
	fusermount3 -u "$mnt"
else
	fail "the sticky directory itself beside nobody's names" "a mount" "a failure"
fi

# The daemon's fd on the unnamed swap file in $1: its link names the directory.
swap_fd() {
	find /proc/[0-9]*/fd -lname "$1/*" 2>/dev/null | head -n 1
}

# Text whose every line can be looked for: 8 MiB of it.
text=$work/text
awk 'BEGIN { for (i = 0; i < 262144; i++) printf "tierfs-swap-marker-%011d\n", i }' >"$text"
want=$(md5 "$text")

# Mount with encrypt=$1, write the text and evict it all.
mount_evicted() {
	swapdir=$work/swap-$1
	mkdir "$swapdir"
	if ! "$tierfs" "$mnt" -o "size=64M,mem=1M,swapsize=64M,cache=never,encrypt=$1,backend=file:$swapdir"; then
		fail "encrypt=$1: mount" "status 0" "a failure"
		return 1
	fi
	cp "$text" "$mnt/text" && "$tierctl" reclaim "$mnt" all >/dev/null ||
		{ fail "encrypt=$1: write and evict" "exit 0" "$?"; return 1; }
	fd=$(swap_fd "$swapdir")
	[ -n "$fd" ] || { fail "encrypt=$1: swap file" "a daemon fd in $swapdir" "none"; return 1; }
	stored=$(stat_of stored_pages)
	[ "${stored:-0}" -ge 1500 ] || { fail "encrypt=$1: evicted" ">= 1500 pages" "$stored"; return 1; }
	ok "encrypt=$1: $stored pages in $fd -> $(readlink "$fd")"
}

if mount_evicted off; then
	n=$(grep -c -a tierfs-swap-marker "$fd")
	[ "$n" -gt 0 ] && ok "encrypt=off: text in the swap file ($n lines)" ||
		fail "encrypt=off: text in the swap file" "> 0 lines" "$n"
	[ "$(md5 "$mnt/text")" = "$want" ] && ok "encrypt=off: read back" ||
		fail "encrypt=off: read back" "$want" "$(md5 "$mnt/text")"
	fusermount3 -u "$mnt"
fi

if mount_evicted on; then
	n=$(grep -c -a tierfs-swap-marker "$fd")
	[ "$n" -eq 0 ] && ok "encrypt=on: no text in the swap file" ||
		fail "encrypt=on: text in the swap file" "0 lines" "$n"
	# A few bytes in three pages of the middle of the data.
	for off in 1048676 3145828 5243000; do
		printf 'XXXXXXXX' | dd of="$fd" bs=1 seek=$off conv=notrunc status=none
	done
	# Page by page, so that one bad page fails one read.
	# shellcheck disable=SC2046
	set -- $(python3 - "$mnt/text" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
bad = reads = 0
for off in range(0, os.fstat(fd).st_size, 4096):
    reads += 1
    try:
        os.pread(fd, 4096, off)
    except OSError as e:
        bad += e.errno == 5
print(bad, reads)
PY
)
	nr_bad=${1:-0}
	[ "$nr_bad" -ge 1 ] && [ "$nr_bad" -le 3 ] && ok "encrypt=on: $nr_bad of ${2:-?} reads fail with EIO" ||
		fail "encrypt=on: reads failing with EIO" "1 to 3" "$nr_bad"
	errors=$(stat_of load_errors)
	[ "${errors:-0}" -ge "$nr_bad" ] && ok "encrypt=on: load_errors $errors" ||
		fail "encrypt=on: load_errors" ">= $nr_bad" "${errors:-none}"
	if "$tierctl" stats "$mnt" --json | grep -q '"decrypt_errors"'; then
		errors=$(stat_of decrypt_errors)
		[ "${errors:-0}" -ge "$nr_bad" ] && ok "encrypt=on: decrypt_errors $errors" ||
			fail "encrypt=on: decrypt_errors" ">= $nr_bad" "${errors:-none}"
	fi
	echo still >"$mnt/other" && [ "$(cat "$mnt/other")" = still ] && stat "$mnt/text" >/dev/null &&
		ok "encrypt=on: the mount stays up" || fail "encrypt=on: the mount" "up" "down"
	fusermount3 -u "$mnt"
fi

# readahead=auto: vma with cache=never, where each read reaches the daemon
# as the program made it; direct through the page cache, whose own
# readahead already has the next reads in flight.
for cache in never auto; do
	swapdir=$work/swap-ra-$cache
	mkdir "$swapdir"
	if ! "$tierfs" "$mnt" -o "size=64M,mem=1M,swapsize=64M,cache=$cache,backend=file:$swapdir"; then
		fail "cache=$cache: mount" "status 0" "a failure"
		continue
	fi
	cp "$text" "$mnt/text" && "$tierctl" reclaim "$mnt" all >/dev/null
	[ "$(md5 "$mnt/text")" = "$want" ] && ok "cache=$cache: read back" ||
		fail "cache=$cache: read back" "$want" "$(md5 "$mnt/text")"
	json=$("$tierctl" stats "$mnt" --json)
	expect_policy=direct
	if [ $cache = never ]; then
		expect_policy=vma
		ahead=$(stat_of pages_read_ahead)
		[ "${ahead:-0}" -gt 0 ] && ok "cache=never: $ahead pages read ahead" ||
			fail "cache=never: pages read ahead" "> 0" "${ahead:-none}"
	fi
	case $json in
	*'"readahead":{"policy":"'$expect_policy'"'*) ok "cache=$cache: readahead policy $expect_policy" ;;
	*) fail "cache=$cache: readahead policy" "$expect_policy" "$(echo "$json" | grep -o '"readahead":{[^}]*')" ;;
	esac
	fusermount3 -u "$mnt"
done

finish
