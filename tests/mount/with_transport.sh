#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The tierfs binary of the mount tests under `meson test --setup uring`:
# $TIERFS_TEST_BIN with transport=$TIERFS_TEST_TRANSPORT added to whatever
# options the test gives (lib.sh and with_mount.sh put it in place).
exec "$TIERFS_TEST_BIN" "$@" -o "transport=$TIERFS_TEST_TRANSPORT"
