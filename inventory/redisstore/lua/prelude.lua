-- Shared by every inventory script; each operation's body is appended.
--
-- KEYS[1] is the event's meta key, "<prefix>{ev:<id>}:meta". Every other
-- key of the event is built from the same prefix, so all of them share the
-- hash tag and live in one Redis Cluster slot.
-- ARGV[1] hold retention (ms), ARGV[2] idempotency TTL (ms); the
-- operation's own arguments start at ARGV[3].
--
-- Replies are {replayed (0|1), fields} where fields is "k\31v\31k\31v..."
-- (the unit separator never occurs in values: ids, seat lists and user
-- text are validated to contain no control characters).

local P = string.sub(KEYS[1], 1, -5)
local K = {
  meta = KEYS[1], rows = P .. 'rows', cnt = P .. 'cnt', exp = P .. 'exp',
  users = P .. 'users', audit = P .. 'audit',
}
local RETENTION = tonumber(ARGV[1])
local IDEM_TTL = tonumber(ARGV[2])
local T = redis.call('TIME')
local NOW = tonumber(T[1]) * 1000 + math.floor(tonumber(T[2]) / 1000)
local SEP = '\31'

local function I(n) return string.format('%d', n) end
local function hold_key(id) return P .. 'h:' .. id end
local function order_key(id) return P .. 'o:' .. id end
local function idem_key(k) return P .. 'i:' .. k end

local function split(s, sep)
  local out = {}
  if s == nil or s == '' then return out end
  for part in string.gmatch(s, '([^' .. sep .. ']+)') do out[#out + 1] = part end
  return out
end

local function reply(replayed, fields) return { replayed, table.concat(fields, SEP) } end
local function fail(code, ...)
  local f = { 'err', code }
  for _, v in ipairs({ ... }) do f[#f + 1] = v end
  return f
end

-- Row status strings, cached for the script and written back by flush().
local row_cache, row_dirty = {}, {}
local function row_get(rk)
  local s = row_cache[rk]
  if s == nil then
    s = redis.call('HGET', K.rows, rk)
    if not s then s = false end
    row_cache[rk] = s
  end
  return s
end
local function row_put(rk, s) row_cache[rk] = s; row_dirty[rk] = true end
local function flush()
  for rk in pairs(row_dirty) do redis.call('HSET', K.rows, rk, row_cache[rk]) end
  row_dirty = {}
end

local function parse_seat(id)
  local s, r, n = string.match(id, '^([^-]+)-([^-]+)-(%d+)$')
  return s, r, tonumber(n)
end

-- set_seats moves seats to state c ('.', 'h' or 's') and keeps the
-- per-section counts.
local function set_seats(seats, c)
  for _, id in ipairs(seats) do
    local s, r, n = parse_seat(id)
    local rk = s .. '-' .. r
    local row = row_get(rk)
    if row and n <= #row then
      local old = string.sub(row, n, n)
      if old ~= c then
        if old == 'h' then redis.call('HINCRBY', K.cnt, 'h:' .. s, -1) end
        if old == 's' then redis.call('HINCRBY', K.cnt, 's:' .. s, -1) end
        if c == 'h' then redis.call('HINCRBY', K.cnt, 'h:' .. s, 1) end
        if c == 's' then redis.call('HINCRBY', K.cnt, 's:' .. s, 1) end
        row_put(rk, string.sub(row, 1, n - 1) .. c .. string.sub(row, n + 1))
      end
    end
  end
end

local function add_user(user, n)
  local v = redis.call('HINCRBY', K.users, user, n)
  if v <= 0 then redis.call('HDEL', K.users, user) end
end

local function audit(fields)
  local args = { 'XADD', K.audit, '*' }
  for i = 1, #fields, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= '' and v ~= '0' then
      args[#args + 1] = fields[i]
      args[#args + 1] = v
    end
  end
  redis.call(unpack(args))
end

-- end_hold finishes a live hold as 'released' or 'expired' at time at.
local function end_hold(id, status, at, actor)
  local hk = hold_key(id)
  local h = redis.call('HMGET', hk, 'u', 'seats', 'pool', 'q', 'st')
  if h[5] ~= 'held' then return end
  local q = tonumber(h[4])
  if h[3] and h[3] ~= '' then
    redis.call('HINCRBY', K.cnt, 'ph:' .. h[3], -q)
  else
    set_seats(split(h[2], ','), '.')
  end
  add_user(h[1], -q)
  redis.call('HSET', hk, 'st', status, 'end', I(at))
  redis.call('PEXPIREAT', hk, at + RETENTION)
  redis.call('ZREM', K.exp, id)
  audit({ 'a', status == 'expired' and 'expire' or 'release', 'at', I(at), 'actor', actor, 'u', h[1],
    'h', id, 'seats', h[2] or '', 'pool', h[3] or '', 'q', I(q) })
end

-- sweep expires up to max due holds (max < 0: all of them), oldest first,
-- so every operation sees expired holds as gone.
local function sweep(max)
  local due
  if max < 0 then
    due = redis.call('ZRANGEBYSCORE', K.exp, '-inf', NOW, 'WITHSCORES')
  else
    due = redis.call('ZRANGEBYSCORE', K.exp, '-inf', NOW, 'WITHSCORES', 'LIMIT', 0, max)
  end
  for i = 1, #due, 2 do
    end_hold(due[i], 'expired', tonumber(due[i + 1]), 'system')
  end
  flush()
  return #due / 2
end

-- idem_check returns a reply for a remembered key, or nil.
local function idem_check(key, fp)
  if key == '' then return nil end
  local v = redis.call('GET', idem_key(key))
  if not v then return nil end
  local cut = string.find(v, '\n', 1, true)
  if string.sub(v, 1, cut - 1) ~= fp then
    return reply(0, fail('idempotency_mismatch'))
  end
  return { 1, string.sub(v, cut + 1) }
end

local function idem_store(key, fp, fields)
  if key ~= '' then
    redis.call('SET', idem_key(key), fp .. '\n' .. table.concat(fields, SEP), 'PX', IDEM_TTL)
  end
end

local RECORDABLE = {
  seat_unavailable = true, sold_out = true, not_enough_seats = true, user_limit = true,
  hold_expired = true, hold_released = true, hold_confirmed = true, order_cancelled = true,
}

-- outcome remembers a result under an idempotency key when it is one
-- that is remembered, and returns the reply.
local function outcome(key, fp, fields)
  if fields[1] ~= 'err' or RECORDABLE[fields[2]] then idem_store(key, fp, fields) end
  return reply(0, fields)
end

local HOLD_FIELDS = { 'u', 'seats', 'pool', 'q', 'price', 'c', 'e', 'st', 'o' }
local ORDER_FIELDS = { 'h', 'u', 'seats', 'pool', 'q', 'price', 'pay', 'st', 'c', 'x' }

-- load reads a hash's named fields into a table, or nil when it is gone.
local function load(key, names, id)
  local v = redis.call('HMGET', key, unpack(names))
  if not v[1] then return nil end
  local r = { id = id }
  for i, n in ipairs(names) do r[n] = v[i] or '' end
  return r
end
local function get_hold(id) return load(hold_key(id), HOLD_FIELDS, id) end
local function get_order(id) return load(order_key(id), ORDER_FIELDS, id) end

-- ok_fields flattens a record into a success reply.
local function ok_fields(r, names)
  local f = { 'ok', '1', 'id', r.id }
  for _, n in ipairs(names) do
    f[#f + 1] = n
    f[#f + 1] = r[n]
  end
  return f
end

-- hset_many sets field/value pairs in chunks that unpack can take.
local function hset_many(key, kv)
  for i = 1, #kv, 2000 do
    local chunk = {}
    for j = i, math.min(i + 1999, #kv) do chunk[#chunk + 1] = kv[j] end
    redis.call('HSET', key, unpack(chunk))
  end
end

local function defined()
  return redis.call('EXISTS', K.meta) == 1
end
