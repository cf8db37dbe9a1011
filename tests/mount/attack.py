#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Metadata floods as another user would send them, each until the
filesystem has refused 200 times in a row or a bound on count and time is
reached.  Prints one
line: "KIND: N made, errno NAME" (or "bound reached" when nothing refused:
the flood was not bounded).  Usage: attack.py KIND DIR [MAX [SECONDS]]
KIND: xattrs (files with two 60000-byte user.* values), symlinks (4000-byte
targets), links (hard links with 255-byte names to one file), names (empty
files with 255-byte names), deep (each directory, with a 255-byte name, in
the one made before), small-xattrs (1000-byte values on one file, for an
inode-space count)."""
import errno
import os
import sys
import time


def make(kind, top, made, first, big, target, deep):
    name = os.path.join(top, ("%08d" % made).ljust(255, "n"))
    if kind == "deep":
        # Far below PATH_MAX: each step relative to the last directory.
        os.mkdir(os.path.basename(name), dir_fd=deep[0])
        fd = os.open(os.path.basename(name), os.O_RDONLY | os.O_DIRECTORY, dir_fd=deep[0])
        os.close(deep[0])
        deep[0] = fd
    elif kind == "xattrs":
        path = os.path.join(top, "%08d" % made)
        open(path, "w").close()
        os.setxattr(path, "user.a", big)
        os.setxattr(path, "user.b", big)
    elif kind == "symlinks":
        os.symlink(target, name)
    elif kind == "links":
        os.link(first, name)
    elif kind == "names":
        open(name, "w").close()
    elif kind == "small-xattrs":
        os.setxattr(first, "user.%d" % made, b"v" * 1000)
    else:
        sys.exit("unknown kind " + kind)


def flood(kind, top, max_items, seconds):
    """Until refused 200 times in a row, 10 ms apart: a limit that lets a
    request through now and then (once per recomputation, say) never ends
    the flood."""
    os.makedirs(top, exist_ok=True)
    deadline = time.monotonic() + seconds
    big = b"x" * 60000
    target = "t" * 4000
    first = os.path.join(top, "f")
    if kind in ("links", "small-xattrs"):
        open(first, "w").close()
    deep = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    made = refused = 0
    last = None
    while made < max_items and time.monotonic() < deadline and refused < 200:
        try:
            make(kind, top, made, first, big, target, deep)
            made += 1
            refused = 0
        except OSError as e:
            last = e
            refused += 1
            time.sleep(0.01)
    if refused >= 200:
        print("%s: %d made, errno %s" % (kind, made, errno.errorcode.get(last.errno, last.errno)))
    else:
        print("%s: %d made, bound reached" % (kind, made))


if __name__ == "__main__":
    flood(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10**7,
          float(sys.argv[4]) if len(sys.argv) > 4 else 120)
