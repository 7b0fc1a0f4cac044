#!/usr/bin/env bash
# Capture a keyspace written by BullMQ (npm) into testdata/frameworks/bullmq.*
source "$(dirname "$0")/common.sh"
npm_setup bullmq@6.7.0
start_redis
node_env
node "$CAPTURE_DIR/capture-bullmq.js"
