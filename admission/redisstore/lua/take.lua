-- Take: take one pass-through slot if any is left.
-- KEYS[1] the slots hash (left, taken), which expires with its grant.
-- Returns 1 if a slot was taken, 0 otherwise.
local left = tonumber(redis.call('HGET', KEYS[1], 'left') or '0')
if left <= 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'left', -1)
redis.call('HINCRBY', KEYS[1], 'taken', 1)
return 1
