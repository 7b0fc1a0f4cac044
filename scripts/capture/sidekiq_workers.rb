# Workers for capture-sidekiq.sh, loaded by the sidekiq server and the client.
require "sidekiq"

class WelcomeWorker
  include Sidekiq::Worker
  def perform(email) = "sent #{email}"
end

class FlakyWorker
  include Sidekiq::Worker
  sidekiq_options retry: 3
  def perform(_) = raise("capture: fails, retried later")
end

class DoomedWorker
  include Sidekiq::Worker
  sidekiq_options retry: 0 # no retries: straight to the dead set
  def perform(_) = raise("capture: deliberate failure")
end

class SlowWorker
  include Sidekiq::Worker
  def perform = sleep(3600) # held running while the keyspace is dumped
end
