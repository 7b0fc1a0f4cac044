"""Build and parse per key, generated code against hand-written code, in
one run: python3 bench.py <dir of keys_gen.py generated from keys.yaml>.
The hand-written builders are f-strings with the check a careful author
writes (the type, and the separator for a word); the hand-written parsers
slice or split and return the same dataclass, so what differs is the
generated code's work. Prints ns per call, best of 7 runs."""

import re
import sys
import timeit

sys.path.insert(0, sys.argv[1])
import keys_gen as k  # noqa: E402

SESSION = "0e5b2a9c-8f1e-4c3b-9d2a-1b2c3d4e5f60"
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def hand_build_cart(user_id: int) -> str:
    if type(user_id) is not int:
        raise ValueError("user_id")
    return f"v1:cart:{{{user_id}}}:items"


def hand_parse_cart(key: str) -> k.CartItemsKey:
    if not key.startswith("v1:cart:{") or not key.endswith("}:items"):
        raise ValueError(key)
    return k.CartItemsKey(int(key[9:-7]))


def hand_build_session(session_id: str) -> str:
    if UUID.fullmatch(session_id) is None:
        raise ValueError("session_id")
    return f"v2:user:session:{session_id}"


def hand_parse_session(key: str) -> k.UserSessionKey:
    if not key.startswith("v2:user:session:") or UUID.fullmatch(key, 16) is None:
        raise ValueError(key)
    return k.UserSessionKey(key[16:])


def hand_build_fragment(template: str, locale: str) -> str:
    if not template or ":" in template or not locale or ":" in locale:
        raise ValueError("template/locale")
    return f"v1:cache:fragment:{template}:{locale}"


def hand_parse_fragment(key: str) -> k.HtmlFragmentCacheKey:
    parts = key.split(":")
    if len(parts) != 5 or parts[:3] != ["v1", "cache", "fragment"] or not parts[3] or not parts[4]:
        raise ValueError(key)
    return k.HtmlFragmentCacheKey(parts[3], parts[4])


cases = [
    ("cart-items build", lambda: k.build_cart_items(42), lambda: hand_build_cart(42)),
    ("cart-items parse", lambda: k.parse_cart_items("v1:cart:{42}:items"), lambda: hand_parse_cart("v1:cart:{42}:items")),
    ("user-session build", lambda: k.build_user_session(SESSION), lambda: hand_build_session(SESSION)),
    ("user-session parse", lambda: k.parse_user_session("v2:user:session:" + SESSION), lambda: hand_parse_session("v2:user:session:" + SESSION)),
    ("html-fragment-cache build", lambda: k.build_html_fragment_cache("header", "de-DE"), lambda: hand_build_fragment("header", "de-DE")),
    ("html-fragment-cache parse", lambda: k.parse_html_fragment_cache("v1:cache:fragment:header:de-DE"), lambda: hand_parse_fragment("v1:cache:fragment:header:de-DE")),
]
for name, gen, hand in cases:
    assert gen() == hand(), name
    n = 200_000
    g = min(timeit.repeat(gen, number=n, repeat=7)) / n * 1e9
    h = min(timeit.repeat(hand, number=n, repeat=7)) / n * 1e9
    print(f"| {name} | {g:.0f} ns | {h:.0f} ns | {g / h:.2f}x |")
