#!/usr/bin/env bash
# Capture a keyspace written by Bull v4 (npm) into testdata/frameworks/bull.*
source "$(dirname "$0")/common.sh"
npm_setup bull@4.16.5
start_redis
node_env
node "$CAPTURE_DIR/capture-bull.js"
