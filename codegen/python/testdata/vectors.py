"""Runs the shared codegen vectors (codegen/vectors) against a generated
module: python3 vectors.py <module dir> <vectors.json> <names.json>.
Prints every failure and "ok N" for the N checks that passed."""

import dataclasses
import importlib
import json
import sys

sys.path.insert(0, sys.argv[1])
mod = importlib.import_module("keys_gen")
doc = json.load(open(sys.argv[2], encoding="utf-8"))
names = json.load(open(sys.argv[3], encoding="utf-8"))

ok = 0
bad = 0


def fail(msg):
    global bad
    bad += 1
    print("FAIL", ascii(msg))


def conv(fam, args):
    out = []
    for ph, a in zip(fam["placeholders"] or [], args or []):
        if ph["type"] == "int":
            try:
                out.append(int(a))
            except ValueError:
                out.append(a)
        else:
            out.append(a)
    return out


if doc["registry_digest"] != mod.REGISTRY_DIGEST:
    fail(f"digest {mod.REGISTRY_DIGEST} != {doc['registry_digest']}")
if doc["separator"] != mod.SEPARATOR:
    fail("separator")

for fam in doc["families"]:
    n = names[fam["family"]]
    build = getattr(mod, "build_" + n)
    parse = getattr(mod, "parse_" + n)
    glob = getattr(mod, n.upper() + "_GLOB")
    name = fam["family"]
    if glob == fam["glob"] and getattr(mod, n.upper() + "_PATTERN") == fam["pattern"]:
        ok += 1
    else:
        fail(f"{name}: glob {glob!r} != {fam['glob']!r}")
    for c in fam["cases"]:
        args = conv(fam, c["args"])
        try:
            got = build(*args)
            if got == c["key"]:
                ok += 1
            else:
                fail(f"{name}: build{tuple(args)} = {got!r}, want {c['key']!r}")
        except ValueError as e:
            fail(f"{name}: build{tuple(args)}: {e}")
        try:
            p = parse(c["key"])
            pb = parse(c["key"].encode("utf-8"))
            if list(dataclasses.astuple(p)) == args and p == pb:
                ok += 1
            else:
                fail(f"{name}: parse({c['key']!r}) = {p}, want {args}")
        except ValueError as e:
            fail(f"{name}: parse({c['key']!r}): {e}")
    for c in fam.get("ambiguous") or []:
        args = conv(fam, c["args"])
        try:
            p = parse(c["key"])
            if list(dataclasses.astuple(p)) == args:
                ok += 1
            else:
                fail(f"{name}: parse of ambiguous {c['key']!r} = {p}, want {args}")
        except ValueError as e:
            fail(f"{name}: parse of ambiguous {c['key']!r}: {e}")
        # build of these values either gives a key that parses back to them
        # or refuses them: a built key is never ambiguous.
        try:
            key = build(*args)
            p = parse(key)
            if list(dataclasses.astuple(p)) == args:
                ok += 1
            else:
                fail(f"{name}: build{tuple(args)} = {key!r}, which parses as {p}")
        except ValueError:
            ok += 1
    for inv in fam.get("invalid") or []:
        args = conv(fam, inv["args"])
        try:
            got = build(*args)
            fail(f"{name}: build{tuple(args)} = {got!r}, want ValueError")
        except ValueError:
            ok += 1
    for k in fam["non_keys"]:
        try:
            p = parse(k)
            fail(f"{name}: parse({k!r}) = {p}, want ValueError")
        except ValueError:
            ok += 1

print(f"ok {ok}" if bad == 0 else f"{bad} failed, {ok} passed")
