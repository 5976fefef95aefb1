-- One request against an address's bucket and its prefix's bucket (GCRA).
-- KEYS[1]: the address's bucket; KEYS[2]: the prefix's (one hash tag).
-- ARGV[1]: 1 to take a token from each when both allow it, 0 to look only.
-- ARGV[2], ARGV[3]: the address bucket's emission interval and tolerance
--   in microseconds (interval 0: no bucket).
-- ARGV[4], ARGV[5]: the prefix bucket's.
-- Returns the wait in microseconds until both buckets let the request
-- through: 0 when it passes (and, with ARGV[1] = 1, was counted).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function check(key, interval, tolerance)
  if interval == 0 then
    return nil, 0
  end
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then
    tat = now
  end
  local wait = tat - now - tolerance
  if wait > 0 then
    return nil, wait
  end
  return tat + interval, 0
end

local take = ARGV[1] == '1'
local anext, await = check(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
local pnext, pwait = check(KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]))
local wait = math.max(await, pwait)
if wait > 0 or not take then
  return wait
end
-- A bucket's key lives until its arrival time: after that it is full,
-- which is what a missing key means.
local function store(key, tat)
  if tat then
    redis.call('SET', key, string.format('%d', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
  end
end
store(KEYS[1], anext)
store(KEYS[2], pnext)
return 0
