-- Revoke: bar a pass until ARGV[2] (Unix ms), keeping the later time if
-- it is barred already; bars already over are dropped.
-- KEYS[1] the event's revocations (zset: score until, member pass id);
-- ARGV[1] pass id, ARGV[2] until.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if tonumber(ARGV[2]) > now then
  redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
end
return 1
