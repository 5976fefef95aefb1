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
  meta = KEYS[1], cnt = P .. 'cnt', exp = P .. 'exp', users = P .. 'users', audit = P .. 'audit',
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

-- Each row's seats are one string key, a status byte per seat ('.' free,
-- 'h' held, 's' sold). Reads of whole rows (best-available, seat maps) are
-- cached for the script; a seat changes with SETRANGE, one byte, which
-- drops the cached copy. Counter changes are summed and written by flush().
local function row_key(rk) return P .. 'row:' .. rk end
local row_cache = {}
local function row_get(rk)
  local s = row_cache[rk]
  if s == nil then
    s = redis.call('GET', row_key(rk))
    row_cache[rk] = s
  end
  return s
end

-- seat_char returns a seat's status byte, or '' when there is no such
-- seat; single seats read this way are remembered in seat_cache.
local seat_cache = {}
local function seat_char(s, r, n)
  local rk = s .. '-' .. r
  local row = row_cache[rk]
  if row ~= nil then
    if not row then return '' end
    return string.sub(row, n, n)
  end
  local id = rk .. '-' .. n
  local c = seat_cache[id]
  if c == nil then
    c = redis.call('GETRANGE', row_key(rk), n - 1, n - 1)
    seat_cache[id] = c
  end
  return c
end

local cnt_delta = {}
local function count(field, d) cnt_delta[field] = (cnt_delta[field] or 0) + d end
local function flush()
  for f, d in pairs(cnt_delta) do
    if d ~= 0 then redis.call('HINCRBY', K.cnt, f, d) end
  end
  cnt_delta = {}
end

local function parse_seat(id)
  local s, r, n = string.match(id, '^([^-]+)-([^-]+)-(%d+)$')
  return s, r, tonumber(n)
end

-- set_seats moves seats to state c ('.', 'h' or 's') and keeps the
-- per-section counts (written by flush()).
local function set_seats(seats, c)
  for _, id in ipairs(seats) do
    local s, r, n = parse_seat(id)
    local old = seat_char(s, r, n)
    if old ~= '' and old ~= c then
      if old == 'h' then count('h:' .. s, -1) elseif old == 's' then count('s:' .. s, -1) end
      if c == 'h' then count('h:' .. s, 1) elseif c == 's' then count('s:' .. s, 1) end
      local rk = s .. '-' .. r
      redis.call('SETRANGE', row_key(rk), n - 1, c)
      row_cache[rk] = nil
      seat_cache[id] = c
    end
  end
end

local function add_user(user, n)
  local v = redis.call('HINCRBY', K.users, user, n)
  if v <= 0 then redis.call('HDEL', K.users, user) end
end

-- Holds and orders are single strings: their fields in a fixed order,
-- joined by SEP. One SET writes a record, one GET reads it.
local HOLD_FIELDS = { 'u', 'seats', 'pool', 'q', 'price', 'c', 'e', 'st', 'o', 'end' }
local ORDER_FIELDS = { 'h', 'u', 'seats', 'pool', 'q', 'price', 'pay', 'st', 'c', 'x', 'reason' }

-- decode reads a record string into a table of named fields ('' for
-- fields the string lacks).
local function decode(v, names, id)
  local r = { id = id }
  local start = 1
  for i = 1, #names do
    local j = string.find(v, SEP, start, true)
    if j then
      r[names[i]] = string.sub(v, start, j - 1)
      start = j + 1
    else
      r[names[i]] = string.sub(v, start)
      for k = i + 1, #names do r[names[k]] = '' end
      break
    end
  end
  return r
end

local function encode(r, names)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = r[n] or '' end
  return table.concat(parts, SEP)
end

local function get_hold(id)
  local v = redis.call('GET', hold_key(id))
  if not v then return nil end
  return decode(v, HOLD_FIELDS, id)
end
local function get_order(id)
  local v = redis.call('GET', order_key(id))
  if not v then return nil end
  return decode(v, ORDER_FIELDS, id)
end

-- put_hold writes a hold; one that has ended disappears RETENTION after.
local function put_hold(h)
  if h.st == 'released' or h.st == 'expired' then
    redis.call('SET', hold_key(h.id), encode(h, HOLD_FIELDS), 'PXAT', tonumber(h['end']) + RETENTION)
  else
    redis.call('SET', hold_key(h.id), encode(h, HOLD_FIELDS))
  end
end
local function put_order(o) redis.call('SET', order_key(o.id), encode(o, ORDER_FIELDS)) end

-- ok_fields flattens a record into a success reply.
local function ok_fields(r, names)
  local f = { 'ok', '1', 'id', r.id }
  for _, n in ipairs(names) do
    f[#f + 1] = n
    f[#f + 1] = r[n]
  end
  return f
end

-- audit appends one entry to the event's stream: a single field "e"
-- holding action, time, actor, user, hold, order, seats, pool and
-- quantity joined by SEP (read by the Go side in that order).
local function audit(a, at, actor, user, hold, order, seats, pool, q)
  redis.call('XADD', K.audit, '*', 'e', table.concat({ a, at, actor or '', user or '', hold or '', order or '',
    seats or '', pool or '', q or '' }, SEP))
end

-- end_hold finishes a live hold as 'released' or 'expired' at time at.
local function end_hold(id, status, at, actor)
  local h = get_hold(id)
  if not h or h.st ~= 'held' then return end
  local q = tonumber(h.q)
  if h.pool ~= '' then
    count('ph:' .. h.pool, -q)
  else
    set_seats(split(h.seats, ','), '.')
  end
  add_user(h.u, -q)
  h.st, h['end'] = status, I(at)
  put_hold(h)
  redis.call('ZREM', K.exp, id)
  audit(status == 'expired' and 'expire' or 'release', I(at), actor, h.u, id, '', h.seats, h.pool, h.q)
end

-- sweep expires up to max due holds (max < 0: all of them), oldest first,
-- so every operation sees expired holds as gone.
--
-- The meta field "due" is a lower bound on the earliest live hold's
-- expiry (absent: no live hold), so that scripts can skip the sweep while
-- nothing is due. A new hold lowers it when it expires sooner (note_due);
-- a sweep sets it to the earliest remaining expiry. Confirms and releases
-- leave it, which can only make it too early: a sweep then finds nothing
-- and corrects it.
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
  local n = #due / 2
  local bound = false -- the new "due", or false when it stays as it was
  if max < 0 or n < max then
    local first = redis.call('ZRANGE', K.exp, 0, 0, 'WITHSCORES')
    if first[2] then
      redis.call('HSET', K.meta, 'due', first[2])
      bound = first[2]
    else
      redis.call('HDEL', K.meta, 'due')
      bound = nil
    end
  end
  return n, bound
end

-- open reads the event's ttl, limit and due fields and any others named,
-- and expires the holds that are due. It returns nil when the event is
-- not defined.
local function open(...)
  local m = redis.call('HMGET', K.meta, 'ttl', 'limit', 'due', ...)
  if not m[1] then return nil end
  local due = tonumber(m[3])
  if due and due <= NOW then
    local _, bound = sweep(-1)
    m[3] = bound -- the caller's copy must follow, or note_due would compare with a stale bound
  end
  return m
end

-- note_due keeps "due" a lower bound when a hold expiring at exp is added.
local function note_due(m, exp)
  local due = tonumber(m[3])
  if not due or exp < due then
    redis.call('HSET', K.meta, 'due', I(exp))
    m[3] = I(exp)
  end
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
