#!/usr/bin/env bash
# Re-run every capture, then restore each file into a scratch server as a check.
source "$(dirname "$0")/common.sh"
for lib in celery celery-prefixed rq django bullmq bull connect-redis rate-limiter-flexible socket.io-streams socket.io sidekiq; do
	bash "$CAPTURE_DIR/capture-$lib.sh"
done
start_redis
$PY "$CAPTURE_DIR/restore_check.py" "$REDIS_PORT" "$OUT_DIR"/*.jsonl
