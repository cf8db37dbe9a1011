#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The core library's shape, from its symbols: no two of its files call
each other, directly or round a longer circle, and only the FUSE edge
(src/fuse/) calls libfuse.  Usage: layers.py LIBRARY.a"""
import re
import subprocess
import sys


def module(obj):
    # meson names objects after their source path: src_mem_budget.c.o
    name = re.sub(r"\.c\.o$", "", obj)
    return name.replace("_", "/", 1 if name.startswith("backends_") else 2)


def main(lib):
    out = subprocess.run(["nm", "-A", lib], check=True, capture_output=True, text=True).stdout
    defined, used = {}, {}
    for line in out.splitlines():
        m = re.match(r"[^:]*:([^:]+\.o):\s*(?:[0-9a-f]+\s+)?([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        obj = obj.rsplit("/", 1)[-1]
        used.setdefault(obj, set())
        if kind == "U":
            used[obj].add(sym)
        elif kind in "TDBRC":
            defined[sym] = obj
    calls = {o: sorted({defined[s] for s in syms if s in defined} - {o}) for o, syms in used.items()}
    failed = 0
    for obj, syms in sorted(used.items()):
        fuse = sorted(s for s in syms if s.startswith("fuse_"))
        if fuse and not obj.startswith("src_fuse_"):
            print(f"{module(obj)} calls libfuse ({', '.join(fuse)}): only src/fuse/ may")
            failed += 1
    # Depth-first search; a grey node met again closes a circle.
    state, stack = {}, []

    def visit(o):
        nonlocal failed
        state[o] = "grey"
        stack.append(o)
        for w in calls.get(o, []):
            if state.get(w) == "grey":
                circle = stack[stack.index(w):] + [w]
                print("circle: " + " -> ".join(module(x) for x in circle))
                failed += 1
            elif w not in state:
                visit(w)
        stack.pop()
        state[o] = "black"

    for o in sorted(calls):
        if o not in state:
            visit(o)
    print(f"{len(calls)} files, {sum(len(v) for v in calls.values())} calls between them, "
          f"{failed} problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
