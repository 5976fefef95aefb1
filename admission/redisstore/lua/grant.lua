-- Grant: replace the event's pass-through slots.
-- KEYS[1] the slots hash (left, taken); ARGV[1] slots, ARGV[2] ttl (ms).
-- Returns how many slots were taken since the previous grant.
local taken = tonumber(redis.call('HGET', KEYS[1], 'taken') or '0')
redis.call('HSET', KEYS[1], 'left', ARGV[1], 'taken', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return taken
