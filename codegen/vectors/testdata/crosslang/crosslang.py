"""Builds or parses keys with generated Python modules, for the
cross-language round trip (codegen/vectors/crosslang_test.go):
python3 crosslang.py <module dir> build|parse <jobs.json> <out.json>.

A build job is {"mod", "fn", "ints", "args"}: fn(*args), an int argument
given as its decimal text; a parse job is {"mod", "fn", "key"}. Each
result is {"key"} or {"args"} (an int as its decimal text) or {"error"}."""

import dataclasses
import importlib
import json
import sys

sys.path.insert(0, sys.argv[1])
mode = sys.argv[2]
with open(sys.argv[3], encoding="utf-8") as f:
    jobs = json.load(f)
mods = {}


def fn(job):
    m = job["mod"]
    if m not in mods:
        mods[m] = importlib.import_module(m)
    return getattr(mods[m], job["fn"])


out = []
for job in jobs:
    try:
        if mode == "build":
            args = [int(a) if i else a for a, i in zip(job.get("args") or [], job.get("ints") or [])]
            out.append({"key": fn(job)(*args)})
        else:
            p = fn(job)(job["key"])
            out.append({"args": [str(v) for v in dataclasses.astuple(p)]})
    except ValueError as e:
        out.append({"error": str(e)})
with open(sys.argv[4], "w", encoding="utf-8") as f:
    json.dump(out, f)
