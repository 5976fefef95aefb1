-- Lease: take the event's lease if it is free, or renew it if ARGV[1]
-- holds it (compare and extend); anyone else is refused.
-- KEYS[1] the lease; ARGV[1] holder, ARGV[2] ttl (ms).
-- Returns 1 if ARGV[1] leads now, 0 otherwise.
local cur = redis.call('GET', KEYS[1])
if cur == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
