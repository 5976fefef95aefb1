-- Put or delete an event record if its revision is the expected one.
-- KEYS[1] the records hash (field: event id, value: "<revision>:<body>")
-- ARGV[1] event id, ARGV[2] expected revision (0: none), ARGV[3] body,
-- ARGV[4] "put" or "del".
-- Returns the new revision (0 after a delete), or -1 on a conflict.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local rev = 0
if cur then
  rev = tonumber(string.match(cur, '^(%d+):'))
end
if rev ~= tonumber(ARGV[2]) then
  return -1
end
if ARGV[4] == 'del' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], (rev + 1) .. ':' .. ARGV[3])
return rev + 1
