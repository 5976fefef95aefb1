-- Revocations: the bars still in force, by the Redis server's clock;
-- the others are dropped.
-- KEYS[1] the event's revocations (zset: score until, member pass id).
-- Returns {pass id, until, pass id, until, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
