#!/usr/bin/env bash
# Capture sessions written by connect-redis with express-session (npm) into
# testdata/frameworks/connect-redis.*
source "$(dirname "$0")/common.sh"
npm_setup connect-redis@9.0.0 express-session@1.19.0 express@5.3.0 redis@6.3.1
start_redis
node_env
node "$CAPTURE_DIR/capture-connect-redis.js"
