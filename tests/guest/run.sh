#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tierfs on a real cgroup v2 kernel: a throwaway QEMU guest (TCG) boots
# Debian's kernel with a busybox initramfs holding this build's tierfs and
# tierctl, their libraries and fuse.ko, and runs inside.sh as its init.
# The host's hierarchy is left alone.
#
# usage: run.sh TIERFS TIERCTL INSIDE_SH
# TIERFS_GUEST_KERNEL names an unpacked linux-image package (scripts/check
# unpacks Debian's), its vmlinuz and fuse.ko at least; without it the test
# is skipped (77).  Given it, anything missing (qemu-system-x86_64, static
# busybox, cpio) fails the test.  Exits 0 pass, 1 fail.

set -u
tierfs=$1
tierctl=$2
inside=$3
kernel_root=${TIERFS_GUEST_KERNEL:-}

skip() {
	echo "skip: $*"
	exit 77
}

missing() {
	echo "FAIL - the guest: $*"
	exit 1
}

[ -n "$kernel_root" ] || skip "TIERFS_GUEST_KERNEL names no unpacked kernel package"
vmlinuz=$(ls "$kernel_root"/boot/vmlinuz-* 2>/dev/null | head -n 1)
fuse_ko=$(find "$kernel_root/lib/modules" -name 'fuse.ko*' 2>/dev/null | head -n 1)
[ -n "$vmlinuz" ] && [ -n "$fuse_ko" ] || missing "no vmlinuz or fuse.ko under $kernel_root"
for tool in qemu-system-x86_64 busybox cpio gzip fusermount3; do
	command -v "$tool" >/dev/null || missing "no $tool"
done
busybox=$(command -v busybox)
ldd "$busybox" >/dev/null 2>&1 && missing "$busybox is not static (busybox-static)"

work=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-guest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/lib" "$root/dev" "$root/proc" "$root/sys" \
	"$root/tmp" "$root/mnt" "$root/etc" "$root/root"
cp "$busybox" "$root/bin/busybox"
cp "$tierfs" "$root/bin/tierfs"
cp "$tierctl" "$root/bin/tierctl"
# fusermount3 where libfuse looks for it, setuid, for the rootless case.
fusermount=$(command -v fusermount3)
mkdir -p "$root/usr/bin"
cp "$fusermount" "$root/usr/bin/fusermount3"
chmod 4755 "$root/usr/bin/fusermount3"
# The libraries at the paths the loader looks in; libgcc_s, which glibc
# opens for pthread_cancel.
libgcc=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ { print $NF; exit }')
for lib in $libgcc $(ldd "$tierfs" "$tierctl" "$fusermount" |
	awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
case $fuse_ko in
*.xz) xz -dc "$fuse_ko" >"$root/lib/fuse.ko" ;;
*.zst) zstd -dcq "$fuse_ko" >"$root/lib/fuse.ko" ;;
*) cp "$fuse_ko" "$root/lib/fuse.ko" ;;
esac
cp "$inside" "$root/inside.sh"
ln -s /proc/self/mounts "$root/etc/mtab"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh" >>"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "nogroup:x:65534:" >>"$root/etc/group"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=64m tmpfs /tmp
insmod /lib/fuse.ko && chmod 666 /dev/fuse
echo "guest: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 }' /proc/meminfo) MiB"
sh /inside.sh
echo "guest: done"
poweroff -f
INIT
chmod 755 "$root/init" "$root/inside.sh"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz" || exit 1

# The guest's console is the test's output; a guest that hangs is killed.
timeout 900 qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp 2 -m 1024 \
	-nographic -no-reboot -kernel "$vmlinuz" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3" </dev/null 2>&1 |
	sed -u 's/\r$//' | tee "$work/console.log"
result=$(grep -E '^guest: [0-9]+ passed, [0-9]+ failed' "$work/console.log" | tail -n 1)
if [ -z "$result" ]; then
	echo "FAIL - the guest ended without its result line"
	exit 1
fi
case $result in
*" 0 failed"*) exit 0 ;;
*) exit 1 ;;
esac
