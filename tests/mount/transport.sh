# SPDX-License-Identifier: MIT
#
# Sourced by lib.sh and with_mount.sh.  Under `meson test --setup uring`
# every mount takes transport=uring: transport_wrap BIN sets $wrapped to
# with_transport.sh in BIN's place (BIN itself otherwise, and for tmpfs),
# and skips the test (exit 77) where the kernel has no FUSE over io_uring.
transport_wrap() {
	wrapped=$1
	if [ -z "${TIERFS_TEST_TRANSPORT:-}" ] || [ "$1" = tmpfs ]; then
		return
	fi
	[ -e /sys/module/fuse/parameters/enable_uring ] ||
		{ echo "skip: the kernel has no FUSE over io_uring"; exit 77; }
	TIERFS_TEST_BIN=$(realpath "$1")
	export TIERFS_TEST_BIN TIERFS_TEST_TRANSPORT
	wrapped=$(dirname "$(realpath "$0")")/with_transport.sh
}
