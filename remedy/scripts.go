package remedy

// The scripts name their key in KEYS only, so that they run on the node
// that holds it (a cluster routes by KEYS[1]) and ACL key rules apply.

// readScript reads a key for the backup, after checking that it is still
// what the plan saw. OBJECT IDLETIME comes first: on Redis before 7.2 the
// DUMP resets the idle time, and reading both in one script means nothing
// can touch the key in between. ARGV: the planned idle time in seconds (-1:
// not checked), "1" when the plan saw a TTL, the largest DUMP accepted, the
// planned type, and the planned MEMORY USAGE (-1: not compared), which is
// compared only for encodings whose MEMORY USAGE is exact (one allocation).
// The key's MEMORY USAGE now (the plan's measure of --max-key-bytes) is
// checked against the largest DUMP accepted before the DUMP: a key that
// grew since the plan is skipped without a DUMP, which for a big key would
// hold the server, and a DUMP that compresses under the limit does not let
// a big key through.
// ARGV[6] is "1" when checkScript checked the idle time just before, in
// the same pipeline: then a key whose value is one of Redis' shared
// integer objects (see Shared integers below) passes the idle check here,
// since that idle time is every key's that holds the same integer, which
// this pipeline's DUMPs of other keys reset on Redis before 7.2.
// Reply: {status, idle, absolute expiry ms or -1, payload}; the status is
// "ok", or why the key is skipped, in this order: gone, changed (type or
// size), ttl-changed, touched (read or written since the plan), too-large.
const readScript = `
local min = tonumber(ARGV[1])
local idle = -1
if min >= 0 then
  local r = redis.pcall('OBJECT', 'IDLETIME', KEYS[1])
  if type(r) == 'table' and r.err then return {'idle-unreadable'} end
  if not r then return {'gone'} end
  idle = r
end
local pt = redis.call('PTTL', KEYS[1])
if pt == -2 then return {'gone'} end
if redis.call('TYPE', KEYS[1]).ok ~= ARGV[4] then return {'changed'} end
local size = tonumber(ARGV[5])
if size >= 0 then
  local enc = redis.call('OBJECT', 'ENCODING', KEYS[1])
  if enc == 'embstr' or enc == 'int' or enc == 'raw' or enc == 'listpack' or enc == 'ziplist' or enc == 'intset' then
    if redis.call('MEMORY', 'USAGE', KEYS[1]) ~= size then return {'changed'} end
  end
end
if (pt >= 0) ~= (ARGV[2] == '1') then return {'ttl-changed'} end
if idle < min and not (ARGV[6] == '1' and redis.pcall('OBJECT', 'REFCOUNT', KEYS[1]) == 2147483647) then
  return {'touched', idle}
end
local mu = redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', 5)
if mu and mu > tonumber(ARGV[3]) then return {'too-large', mu} end
local abs = -1
if pt >= 0 then
  local r = redis.pcall('PEXPIRETIME', KEYS[1])
  if type(r) == 'number' then abs = r else
    local t = redis.call('TIME')
    abs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + redis.call('PTTL', KEYS[1])
  end
end
local d = redis.call('DUMP', KEYS[1])
if #d > tonumber(ARGV[3]) then return {'too-large', #d} end
return {'ok', idle, abs, d}
`

// Shared integers: OBJECT REFCOUNT replies 2147483647 (INT_MAX, Redis'
// OBJ_SHARED_REFCOUNT) for one of the shared integer objects. While
// maxmemory is 0 or its policy is neither LRU nor LFU (the defaults),
// every string value 0 to 9999 set by a client is one of these 10,000
// objects, whose LRU clock is shared too: OBJECT IDLETIME of such a key
// is the time since any key holding the same integer was last read, and
// a DUMP of one resets it for all of them (on Redis before 7.2, whose DUMP
// touches).

// checkScript checks the idle time of a key before any DUMP of its batch:
// apply sends it for every key of a batch, in the same pipeline, ahead of
// the read scripts, on Redis before 7.2. ARGV[1] is the smallest idle time
// accepted (readScript's). Reply: {"ok", shared} or {"touched", idle,
// shared}, shared 1 when the value is a shared integer object and 0
// otherwise; any other case (gone, idle unreadable)
// is "ok", left to readScript.
const checkScript = `
local min = tonumber(ARGV[1])
if min < 0 then return {'ok', 0} end
local r = redis.pcall('OBJECT', 'IDLETIME', KEYS[1])
if type(r) ~= 'number' then return {'ok', 0} end
local shared = 0
if redis.pcall('OBJECT', 'REFCOUNT', KEYS[1]) == 2147483647 then shared = 1 end
if r < min then return {'touched', r, shared} end
return {'ok', shared}
`

// deleteScript UNLINKs a key only when it is still byte-identical to its
// backup (the SHA-1 of its DUMP), still idle at least ARGV[2] seconds (-1:
// not checked) and its expiry is still ARGV[3] (absolute ms, -1 for none):
// the same where PEXPIRETIME reads it, within ARGV[4] ms (expiryTolerance)
// where it is TIME plus PTTL. Reply: "deleted", or why it was skipped.
//
// Both this script and readScript read the absolute expiry with
// PEXPIRETIME (Redis 7.0) or, where it fails (older servers, or a user
// without it), as TIME plus a PTTL read right after it, so that nothing
// else runs between the two.
const deleteScript = `
local min = tonumber(ARGV[2])
if min >= 0 then
  local r = redis.pcall('OBJECT', 'IDLETIME', KEYS[1])
  if type(r) == 'table' and r.err then return 'idle-unreadable' end
  if not r then return 'gone' end
  if r < min then return 'touched' end
end
local pt = redis.call('PTTL', KEYS[1])
if pt == -2 then return 'gone' end
local want = tonumber(ARGV[3])
if want < 0 then
  if pt ~= -1 then return 'ttl-changed' end
else
  if pt < 0 then return 'ttl-changed' end
  local abs, tol = nil, 0
  local r = redis.pcall('PEXPIRETIME', KEYS[1])
  if type(r) == 'number' then abs = r else
    local t = redis.call('TIME')
    abs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + redis.call('PTTL', KEYS[1])
    tol = tonumber(ARGV[4])
  end
  if math.abs(abs - want) > tol then return 'ttl-changed' end
end
if redis.sha1hex(redis.call('DUMP', KEYS[1])) ~= ARGV[1] then return 'changed' end
redis.call('UNLINK', KEYS[1])
return 'deleted'
`

// expireScript sets a TTL only on a key that still has none (EXPIRE NX of
// Redis 7.0, as a script that older servers run too), so that a TTL the
// application set meanwhile is never overwritten. ARGV: the TTL in ms.
const expireScript = `
local pt = redis.call('PTTL', KEYS[1])
if pt == -2 then return 'gone' end
if pt ~= -1 then return 'ttl-set' end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 'expired'
`
