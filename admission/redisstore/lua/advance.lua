-- Advance: raise a lane's serving counter to at least ARGV[2].
-- KEYS[1] the serving counters (hash: lane -> decimal); ARGV[1] lane,
-- ARGV[2] the target (decimal, no leading zeros).
-- Decimal strings without leading zeros compare by length, then
-- lexically: exact for any 64-bit value, where doubles are not.
-- Returns the counter.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local to = ARGV[2]
if cur == false then
  if to == '0' then return '0' end
elseif #to < #cur or (#to == #cur and to <= cur) then
  return cur
end
redis.call('HSET', KEYS[1], ARGV[1], to)
return to
