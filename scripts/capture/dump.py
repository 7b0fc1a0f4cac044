#!/usr/bin/python3
"""Dump every key of a Redis database as JSON lines for keyreg's framework captures.

Usage: dump.py PORT LIBRARY VERSION OUT_BASENAME

Writes OUT_BASENAME.jsonl (a header line, then one object per key sorted by
key bytes: key or key_b64, type, pttl, dump hex) and OUT_BASENAME.keys.txt (a
human-readable list). Only the standard library is used: a tiny RESP2 client.
"""
import base64
import datetime
import json
import socket
import sys


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)


def show(key):
    """Printable form of a key for the .keys.txt list: Python-style escapes."""
    out = []
    for b in key:
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


def main():
    port, library, version, base = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    c = Conn(port)
    info = c.cmd("INFO", "server").decode()
    redis_version = [l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("redis_version:")][0]
    keys, cursor = set(), b"0"
    while True:
        cursor, batch = c.cmd("SCAN", cursor, "COUNT", "1000")
        keys.update(batch)
        if cursor == b"0":
            break
    rows = []
    for k in sorted(keys):
        typ = c.cmd("TYPE", k)
        pttl = c.cmd("PTTL", k)
        dump = c.cmd("DUMP", k)
        if typ == "none" or dump is None:
            continue  # expired between SCAN and DUMP
        row = {}
        try:
            row["key"] = k.decode("utf-8")
        except UnicodeDecodeError:
            row["key_b64"] = base64.b64encode(k).decode()
        row.update(type=typ, pttl=pttl, dump=dump.hex())
        rows.append((k, row))
    header = {"library": library, "version": version, "redis": redis_version,
              "captured": datetime.date.today().isoformat()}
    with open(base + ".jsonl", "w") as f:
        f.write(json.dumps(header) + "\n")
        for _, row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(base + ".keys.txt", "w") as f:
        f.write("# %s %s, redis %s, %d keys; pttl in ms (-1: none), taken at dump time\n"
                % (library, version, redis_version, len(rows)))
        f.write("# key\ttype\tpttl\n")
        for k, row in rows:
            f.write("%s\t%s\t%d\n" % (show(k), row["type"], row["pttl"]))
    print("%s: %d keys" % (library, len(rows)))


if __name__ == "__main__":
    main()
