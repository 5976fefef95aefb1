-- RecordDraw: append a lane's draw record if it follows the last one.
-- KEYS[1] the lane's draws (zset: score tranche, member the draw's JSON),
-- KEYS[2] the lane's last draw, "<tranche> <next>".
-- ARGV[1] tranche, ARGV[2] first, ARGV[3] next (first + count), ARGV[4]
-- the draw's JSON (canonical: the same draw always encodes the same).
-- Numbers are decimal strings compared as strings, so that 64-bit values
-- stay exact (Lua numbers are doubles). Tranches are small integers.
-- Returns 1 when stored or already stored identically, 0 on a conflict.
local same = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
if same[1] then
  if same[1] == ARGV[4] then return 1 end
  return 0
end
local last = redis.call('GET', KEYS[2])
if last then
  local sp = string.find(last, ' ', 1, true)
  if tonumber(ARGV[1]) <= tonumber(string.sub(last, 1, sp - 1)) then return 0 end
  if ARGV[2] ~= string.sub(last, sp + 1) then return 0 end
elseif ARGV[2] ~= '1' then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[3])
return 1
