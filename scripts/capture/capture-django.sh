#!/usr/bin/env bash
# Capture a keyspace written by Django with django-redis (Debian python3-django,
# python3-django-redis): cache keys with versions and a key prefix, cache and
# cached_db sessions, a django-redis lock. Into testdata/frameworks/django.*
source "$(dirname "$0")/common.sh"
start_redis
export REDIS_PORT CAPTURE_TMP
cd "$CAPTURE_DIR"
VERSION=$($PY -c 'import django, django_redis; print("django %s, django-redis %s" % (django.__version__, ".".join(map(str, django_redis.VERSION))))')

$PY - <<'PY'
import os
import django
from django.conf import settings

url = "redis://127.0.0.1:%s/0" % os.environ["REDIS_PORT"]
settings.configure(
    SECRET_KEY="capture-only",
    INSTALLED_APPS=["django.contrib.sessions"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                           "NAME": os.path.join(os.environ["CAPTURE_TMP"], "db.sqlite3")}},
    CACHES={
        "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url},
        "shop": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url,
                 "KEY_PREFIX": "shop", "VERSION": 2, "TIMEOUT": 3600},
        "zipped": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url,
                   "KEY_PREFIX": "zipped",
                   "OPTIONS": {"COMPRESSOR": "django_redis.compressors.zlib.ZlibCompressor"}},
    },
    USE_TZ=True,
)
django.setup()
from django.core.cache import caches
from django.core.management import call_command
call_command("migrate", "sessions", verbosity=0)

d, shop, zipped = caches["default"], caches["shop"], caches["zipped"]
d.set("greeting", "hello")                         # pickled, TIMEOUT 300
d.set("counter", 41); d.incr("counter")           # raw int
d.set("forever", {"a": 1}, timeout=None)          # no TTL
d.set("pi", 3.14159, version=3)                   # another version
d.set_many({"bulk:1": [1, 2], "bulk:2": True})
d.get_or_set("lazy", lambda: "computed", timeout=60)
shop.set("product:42", {"name": "lamp", "price": 19.5})   # shop:2:product:42, 1 h
shop.set("stock:42", 7)                                   # raw int under a prefix
shop.set("product:42", {"name": "lamp v1"}, version=1)    # an older version
zipped.set("page:/", "<html>" + "x" * 400 + "</html>")   # zlib-compressed pickle
zipped.set("tiny", "small")                             # under the threshold: plain pickle
lock = d.lock("report-lock", timeout=120)               # django-redis lock via redis-py
assert lock.acquire(blocking=False)

from django.contrib.sessions.backends.cache import SessionStore as CacheSession
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBSession
for store in (CacheSession, CachedDBSession):
    s = store()
    s["user_id"] = 7
    s["cart"] = [1, 2, 3]
    s.save()
short = CacheSession(); short["x"] = 1; short.set_expiry(600); short.save()
PY
dump django "$VERSION"
