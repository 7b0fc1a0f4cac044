"""python3 inject.py <hostile.py> <twin.py> <expected.json>: the module
generated from a registry full of hostile text must be, once every string
constant is blanked, the same program as its harmless twin's (nothing
declared, called or imported that the twin has not); importing it prints
nothing; its comments are printable; and its constants carry the registry
strings exactly (expected.json: base64 of their bytes). Prints "ok"."""

import ast
import base64
import contextlib
import importlib.util
import io
import json
import sys
import tokenize


class Blank(ast.NodeTransformer):
    def visit_Constant(self, node):
        if isinstance(node.value, str):
            return ast.copy_location(ast.Constant(value=""), node)
        return node

    def visit_JoinedStr(self, node):
        # f-string literal parts are constants; their expressions stay.
        self.generic_visit(node)
        node.values = [v for v in node.values if not (isinstance(v, ast.Constant) and v.value == "")]
        return node


def shape(path):
    src = open(path, encoding="utf-8").read()
    return ast.dump(Blank().visit(ast.parse(src, path)))


hostile, twin, expected = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3], encoding="utf-8"))
if shape(hostile) != shape(twin):
    a, b = shape(hostile), shape(twin)
    i = next(i for i in range(min(len(a), len(b))) if a[i] != b[i])
    raise SystemExit(f"the hostile module differs from its twin: ...{a[max(0, i-200):i+200]}\n...{b[max(0, i-200):i+200]}")

with open(hostile, "rb") as f:
    for tok in tokenize.tokenize(f.readline):
        if tok.type == tokenize.COMMENT and not tok.string.isprintable():
            raise SystemExit(f"an unprintable comment: {tok.string!r}")

out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    spec = importlib.util.spec_from_file_location("hostile_mod", hostile)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hostile_mod"] = mod
    spec.loader.exec_module(mod)
if out.getvalue():
    raise SystemExit(f"importing printed {out.getvalue()!r}")

for upper, want in expected.items():
    for suffix, value in want.items():
        got = getattr(mod, upper + suffix)
        if got.encode("utf-8", "surrogateescape") != base64.b64decode(value):
            raise SystemExit(f"{upper}{suffix} = {got!r}, want {value!r}")
print("ok")
