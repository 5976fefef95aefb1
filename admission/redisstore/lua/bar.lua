-- Bar: record bars on visitors, merged with any bar already in force
-- (the earlier from, the later until, "revoked" over "completed"); bars
-- already over (by the Redis server's clock) are dropped.
-- KEYS[1] the event's bars (hash: visitor → "from:until:reason", Unix ms),
-- KEYS[2] their expiry index (zset: score until, member visitor).
-- ARGV: visitor, from, until, reason, repeated.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, v in ipairs(gone) do
  redis.call('HDEL', KEYS[1], v)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 1, #ARGV, 4 do
  local v, from, untl, reason = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3]
  if untl > now then
    local old = redis.call('HGET', KEYS[1], v)
    if old then
      local of, ou, oreason = string.match(old, '^(%-?%d+):(%-?%d+):(.*)$')
      if of then
        from = math.min(from, tonumber(of))
        untl = math.max(untl, tonumber(ou))
        if oreason == 'revoked' then
          reason = 'revoked'
        end
      end
    end
    redis.call('HSET', KEYS[1], v, string.format('%d:%d:%s', from, untl, reason))
    redis.call('ZADD', KEYS[2], untl, v)
  end
end
return 1
