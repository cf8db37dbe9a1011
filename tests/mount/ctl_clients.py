#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile clients of the tierfs control channel, for mnt_ctl_adversary.sh.

  squat               bind the names a daemon might use, before it does,
                      and answer every connection with an impostor's text
  trickle MNT         one byte a second to the daemon of MNT, forever
  idle MNT N          N connections to the daemon of MNT that send nothing
  uids MNT UID N      as each of the N uids from UID on (a user's subuids),
                      16 connections that send nothing (run as root)
  flood MNT N         N names under the prefix of MNT, half of them with
                      the daemon's pid in, that listen and never accept,
                      each with its backlog full
  takeover NAME       bind NAME (a killed daemon's), listen and never
                      accept, with the backlog full

Each prints "ready" on stdout once set up, then runs until killed.
"""
import os
import resource
import selectors
import signal
import socket
import struct
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


def listen_full(name, held):
    """Listen at name, never accept, and fill the backlog: a connect gets EAGAIN."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind("\0" + name)
    except OSError:
        s.close()
        return False
    s.listen(0)
    held.append(s)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.setblocking(False)
    try:
        c.connect("\0" + name)
    except OSError:
        pass
    held.append(c)
    return True


def word_sum(b):
    b += b"\x00" * (len(b) % 2)
    return sum(struct.unpack("<%dH" % (len(b) // 2), b))


def unix_bucket(name, partial=(0, b"\x01\x00\x00")):
    """The kernel's hash chain of an abstract stream name (unix_abstract_hash).

    With partial from unix_partial(stem), of the name stem + name.
    """
    total = partial[0] + word_sum(partial[1] + name.encode())
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    h = ~total & 0xFFFF
    return (h ^ (h >> 8) ^ socket.SOCK_STREAM) & 0xFF


def unix_partial(stem):
    """The sum of the address of stem up to its last whole word, and the byte left."""
    b = b"\x01\x00\x00" + stem.encode()
    even = len(b) - len(b) % 2
    return (word_sum(b[:even]), b[even:])


def flood(mnt, n):
    """Names on the daemon's hash chain, bound after it: /proc/net/unix lists them first."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    address = daemon_address(mnt)[1:]
    chain = unix_bucket(address)
    prefix, daemon_pid = address.rsplit("/", 2)[0], address.split("/")[2]
    hexdigits = "0123456789abcdef"
    held = []
    nr = 0
    while nr < n:
        pid = daemon_pid if nr % 2 else str(os.getpid())
        stem = "%s/%s/%014x" % (prefix, pid, int.from_bytes(os.urandom(7), "big"))
        partial = unix_partial(stem)
        for tail in (a + b for a in hexdigits for b in hexdigits):
            if unix_bucket(tail, partial) == chain:
                nr += listen_full(stem + tail, held)
                break
    ready()
    while True:
        time.sleep(60)


def takeover(name):
    held = []
    # The daemon's socket may take a moment to go after it is killed.
    for _ in range(100):
        if listen_full(name, held):
            break
        time.sleep(0.02)
    else:
        sys.exit("cannot bind %s" % name)
    ready()
    while True:
        time.sleep(60)


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
    elif cmd == "flood":
        flood(sys.argv[2], int(sys.argv[3]))
    elif cmd == "takeover":
        takeover(sys.argv[2])
    else:
        sys.exit(__doc__)
