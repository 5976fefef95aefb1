-- Minute: store an event's record of one minute, which runs out keep
-- after this by the Redis server's clock, and drop the records that ran
-- out. KEYS[1] the index (zset: minute → when its record runs out, ms),
-- KEYS[2] the records (hash: minute → record); ARGV[1] minute (Unix
-- seconds), ARGV[2] record, ARGV[3] keep (ms).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + keep, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
while true do
  local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 500)
  if #old == 0 then break end
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('ZREM', KEYS[1], unpack(old))
end
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < keep then
    redis.call('PEXPIRE', KEYS[i], keep)
  end
end
return 1
