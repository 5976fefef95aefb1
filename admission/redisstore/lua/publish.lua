-- Publish: replace a replica's measurement record, which runs out ttl
-- after this by the Redis server's clock, and note it in the event's
-- index of records (dropping the index entries that ran out).
-- KEYS[1] the index (zset: replica → when its record runs out, ms),
-- KEYS[2] the replica's record; ARGV[1] replica, ARGV[2] record,
-- ARGV[3] ttl (ms).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
