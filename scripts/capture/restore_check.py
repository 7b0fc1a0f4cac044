#!/usr/bin/python3
"""Restore every capture in testdata/frameworks into a scratch redis-server and
check that each key comes back with its type and TTL class (none / some).
All files go into one database: RESTORE without REPLACE fails on a key that
two captures share, so the captures can be audited together.

Usage: restore_check.py PORT FILE.jsonl... (capture-all.sh runs it)
"""
import base64
import json
import sys

from dump import Conn


def main():
    c = Conn(int(sys.argv[1]))
    bad = 0
    c.cmd("FLUSHALL")
    for path in sys.argv[2:]:
        with open(path) as f:
            header = json.loads(f.readline())
            rows = [json.loads(line) for line in f]
        for row in rows:
            key = row["key"].encode() if "key" in row else base64.b64decode(row["key_b64"])
            ttl = row["pttl"] if row["pttl"] > 0 else 0
            c.cmd("RESTORE", key, str(ttl), bytes.fromhex(row["dump"]))
            typ, pttl = c.cmd("TYPE", key), c.cmd("PTTL", key)
            if typ != row["type"] or (pttl == -1) != (row["pttl"] == -1):
                print("%s: %r restored as %s pttl %d" % (path, key, typ, pttl))
                bad += 1
        print("%s %s: %d keys restored" % (header["library"], header["version"], len(rows)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
