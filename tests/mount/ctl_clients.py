#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile clients of the tierfs control channel, for mnt_ctl_adversary.sh.

  squat               bind the names a daemon might use, before it does,
                      and answer every connection with an impostor's text
  trickle MNT         one byte a second to the daemon of MNT, forever
  idle MNT N          N connections to the daemon of MNT that send nothing
  uids MNT UID N      as each of the N uids from UID on (a user's subuids),
                      16 connections that send nothing (run as root)

Each prints "ready" on stdout once set up, then runs until killed.
"""
import os
import selectors
import signal
import socket
import sys
import time

IMPOSTOR = b"ok\nIMPOSTOR: this is not the daemon\n"


def ready():
    print("ready", flush=True)


def squat():
    sel = selectors.DefaultSelector()
    names = []
    for minor in range(256):
        names += ["tierfs/0:%d" % minor,
                  "tierfs/0:%d/%d/0000000000000000" % (minor, os.getpid()),
                  "tierfs/0:%d/1/0000000000000000" % minor]
    for name in names:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind("\0" + name)
        except OSError:
            s.close()
            continue
        s.listen(64)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    ready()
    while True:
        for key, _ in sel.select():
            try:
                c, _ = key.fileobj.accept()
                c.settimeout(0.2)
                c.sendall(IMPOSTOR)
                c.close()
            except OSError:
                pass


def daemon_address(mnt):
    """The name the daemon of mnt listens at: the one whose process is tierfs."""
    st = os.stat(mnt)
    prefix = "@tierfs/%d:%d/" % (os.major(st.st_dev), os.minor(st.st_dev))
    with open("/proc/net/unix") as f:
        for line in f:
            name = line.split()[-1]
            if not name.startswith(prefix):
                continue
            pid = name[len(prefix):].split("/")[0]
            try:
                with open("/proc/%s/comm" % pid) as comm:
                    if comm.read().strip().startswith("tierfs"):
                        return "\0" + name[1:]
            except OSError:
                pass
    sys.exit("no daemon socket for %s" % mnt)


def trickle(mnt):
    address = daemon_address(mnt)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(address)
    ready()
    while True:
        try:
            s.send(b"s")
        except OSError:
            # Cut off at the deadline, as it should be: come back.
            s.close()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(address)
            except OSError:
                pass
        time.sleep(1)


def idle(mnt, n, is_ready=True):
    address = daemon_address(mnt)
    held = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(address)
            held.append(s)
        except OSError:
            s.close()
    if is_ready:
        ready()
    while True:
        # Whoever was cut off connects again, so the load stays.
        time.sleep(0.5)
        for i, s in enumerate(held):
            try:
                if s.recv(1, socket.MSG_DONTWAIT) == b"":
                    raise OSError
            except BlockingIOError:
                continue
            except OSError:
                s.close()
                held[i] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    held[i].connect(address)
                except OSError:
                    pass


def uids(mnt, first, n):
    children = []
    for uid in range(first, first + n):
        pid = os.fork()
        if pid == 0:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            idle(mnt, 16, False)
        children.append(pid)

    def stop(*_):
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    time.sleep(1)
    ready()
    while True:
        time.sleep(60)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "squat":
        squat()
    elif cmd == "trickle":
        trickle(sys.argv[2])
    elif cmd == "idle":
        idle(sys.argv[2], int(sys.argv[3]))
    elif cmd == "uids":
        uids(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
