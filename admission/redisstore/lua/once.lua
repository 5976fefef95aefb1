-- Once: spend a one-time value (a proof of work's challenge id) and, for
-- a join, append its visitor to the tranche in the same atomic step, so
-- that one solution buys one place in one round trip.
-- KEYS[1] the value's key (the replay guard's own for it); KEYS[2] (only for a
-- join) the tranche's members. On one Redis, not a Cluster: the keys are in
-- different slots.
-- ARGV[1] the mark: the visitor id appended, or a random mark of its own;
-- ARGV[2] when the value may be forgotten, Unix ms (> 0).
-- Returns 1 when the value was unspent, or spent under this very mark (a
-- call go-redis sent again after losing the first reply), 0 when another
-- spent it first; 0 appends nothing.
local old = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PXAT', ARGV[2])
if old and old ~= ARGV[1] then
  return 0
end
if KEYS[2] then
  redis.call('APPEND', KEYS[2], ARGV[1])
end
return 1
