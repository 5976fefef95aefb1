-- The bare hold a design without a sidecar would run in Redis, for
-- redis-benchmark to compare against: take one seat if it is free (an
-- expired hold counts as free), record the hold with its expiry, index the
-- expiry for the reaper, append an audit entry.
-- KEYS: seats hash, hold key prefix, expiry zset, audit stream.
-- ARGV: seat, hold id, ttl ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seat, hold, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local cur = redis.call('HGET', KEYS[1], seat)
if cur then
  local exp = tonumber(string.match(cur, '|(%d+)$'))
  if exp and exp > now then return 0 end
end
local exp = now + ttl
redis.call('HSET', KEYS[1], seat, hold .. '|' .. exp)
redis.call('HSET', KEYS[2] .. hold, 'seat', seat, 'e', exp, 'st', 'held')
redis.call('ZADD', KEYS[3], exp, hold)
redis.call('XADD', KEYS[4], '*', 'a', 'hold', 'h', hold, 'seats', seat)
return 1
