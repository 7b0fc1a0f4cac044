# Shared helpers for the capture scripts: source it, then call start_redis.
# Starts a private redis-server on a free loopback port in a temp dir (no RDB,
# no AOF) and stops it on exit. Sets REDIS_PORT, CAPTURE_TMP, OUT_DIR.
set -euo pipefail
CAPTURE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$CAPTURE_DIR/../.." && pwd)
OUT_DIR="$REPO_ROOT/testdata/frameworks"
PY=/usr/bin/python3 # Debian's python, where the python3-* packages live

start_redis() {
	CAPTURE_TMP=$(mktemp -d)
	REDIS_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
		--dir "$CAPTURE_TMP" --daemonize yes --pidfile "$CAPTURE_TMP/redis.pid" \
		--logfile "$CAPTURE_TMP/redis.log"
	trap stop_redis EXIT
	for _ in $(seq 100); do
		redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "redis-server did not start" >&2
	exit 1
}

stop_redis() {
	if [ -f "$CAPTURE_TMP/redis.pid" ]; then
		kill "$(cat "$CAPTURE_TMP/redis.pid")" 2>/dev/null || true
	fi
	[ -n "${WORKER_PID:-}" ] && kill "$WORKER_PID" 2>/dev/null || true
	rm -rf "$CAPTURE_TMP"
}

# dump LIBRARY VERSION: writes testdata/frameworks/LIBRARY.{jsonl,keys.txt}
dump() {
	mkdir -p "$OUT_DIR"
	$PY "$CAPTURE_DIR/dump.py" "$REDIS_PORT" "$1" "$2" "$OUT_DIR/$1"
}

# npm_dir: a temp dir outside the repo where the node packages are installed.
NPM_DIR=${CAPTURE_NPM_DIR:-/tmp/keyreg-capture-npm}

# npm_setup PKG@VERSION...: installs the node packages into $NPM_DIR (outside
# the repository) and points NODE_PATH at them.
npm_setup() {
	mkdir -p "$NPM_DIR"
	(cd "$NPM_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
		npm install --no-audit --no-fund --loglevel error "$@" >/dev/null)
	export NODE_PATH="$NPM_DIR/node_modules"
}

# node_env: the environment a node script needs to call dump.py itself while
# its workers still hold their jobs (locks, heartbeats exist only then).
node_env() {
	export REDIS_PORT PY DUMP_PY="$CAPTURE_DIR/dump.py" OUT_DIR
}
