#!/usr/bin/env bash
# Capture a keyspace written by Sidekiq (Debian ruby-sidekiq) into
# testdata/frameworks/sidekiq.*
source "$(dirname "$0")/common.sh"
start_redis
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
cd "$CAPTURE_DIR"
VERSION=$(ruby -e 'require "sidekiq"; print Sidekiq::VERSION')

setsid sidekiq -r ./sidekiq_workers.rb -c 2 -q default -q critical >"$CAPTURE_TMP/sidekiq.log" 2>&1 &
WORKER_PID=$!
trap 'kill -9 -- -$WORKER_PID 2>/dev/null || true; stop_redis' EXIT

ruby -r ./sidekiq_workers.rb -r sidekiq/api -e '
def wait_for(what, tries = 600)
  tries.times { return if yield; sleep 0.1 }
  abort "sidekiq capture: timed out waiting for #{what}"
end
wait_for("a process heartbeat") { Sidekiq::ProcessSet.new.size == 1 }
WelcomeWorker.perform_async("a@example.com")
WelcomeWorker.set(queue: "critical").perform_async("b@example.com")
FlakyWorker.perform_async(1)
DoomedWorker.perform_async(2)
WelcomeWorker.perform_in(3600, "later@example.com")
WelcomeWorker.set(queue: "low").perform_async("queued@example.com") # no process reads "low"
wait_for("the retry") { Sidekiq::RetrySet.new.size == 1 }
wait_for("the dead job") { Sidekiq::DeadSet.new.size == 1 }
SlowWorker.perform_async
wait_for("the running job") { Sidekiq::Workers.new.size == 1 }
wait_for("stats to be flushed") { Sidekiq::Stats.new.processed >= 1 && Sidekiq::Stats.new.failed >= 2 }
' 2> >(grep -v 'Redis#sadd will always return' >&2)
dump sidekiq "$VERSION"
