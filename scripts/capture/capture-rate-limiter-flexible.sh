#!/usr/bin/env bash
# Capture RateLimiterRedis counters (npm rate-limiter-flexible) into
# testdata/frameworks/rate-limiter-flexible.*
source "$(dirname "$0")/common.sh"
npm_setup rate-limiter-flexible@11.4.0 ioredis@6.0.0
start_redis
node_env
node "$CAPTURE_DIR/capture-rate-limiter-flexible.js"
