#!/usr/bin/env bash
# Capture the Pub/Sub channels of @socket.io/redis-adapter (npm, the classic
# adapter) into testdata/frameworks/socket.io.channels.txt
source "$(dirname "$0")/common.sh"
npm_setup @socket.io/redis-adapter@8.3.0 socket.io@4.8.4 socket.io-client@4.8.4 redis@4.7.0
start_redis
node_env
node "$CAPTURE_DIR/capture-socket.io.js"
