-- Bars: the visitor bars still in force, by the Redis server's clock;
-- the others are dropped.
-- KEYS[1] the event's bars (hash), KEYS[2] their expiry index (zset).
-- Returns {visitor, "from:until:reason", ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, v in ipairs(gone) do
  redis.call('HDEL', KEYS[1], v)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
return redis.call('HGETALL', KEYS[1])
