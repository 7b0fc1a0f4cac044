#!/usr/bin/env bash
# Capture the keys of @socket.io/redis-streams-adapter (npm) into
# testdata/frameworks/socket.io-streams.*
source "$(dirname "$0")/common.sh"
npm_setup @socket.io/redis-streams-adapter@0.3.1 socket.io@4.8.4 socket.io-client@4.8.4 redis@6.3.1
start_redis
node_env
node "$CAPTURE_DIR/capture-socket.io-streams.js"
