-- hold: ARGV[3] hold id, [4] user, [5] kind (seats|section|tier|ga),
-- [6] target (seat list, section, tier or pool), [7] quantity,
-- [8] ttl ms (0: the event's), [9] idempotency key, [10] fingerprint,
-- [11] actor. The checks run in the order the embedded store uses:
-- unknown targets, the user limit, then availability.
local id, user, kind, target = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local qty, ttl, key, fp, actor = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9], ARGV[10], ARGV[11]

-- The meta field the request names first (its section, tier or pool) is
-- read with the event's own fields.
local first_field
if kind == 'seats' then
  first_field = 's:' .. (string.match(target, '^([^-]+)-') or '')
elseif kind == 'section' then
  first_field = 's:' .. target
elseif kind == 'tier' then
  first_field = 't:' .. target
else
  first_field = 'p:' .. target
end
local m = open(first_field)
if not m then return reply(0, fail('event_not_found')) end
local replay = idem_check(key, fp)
if replay then return replay end
-- Hold ids are random; one that exists already means this call is a
-- client's retry of a script whose reply was lost. Answer as the first
-- run did instead of taking more seats under the same id.
if redis.call('EXISTS', hold_key(id)) == 1 then
  return reply(0, ok_fields(get_hold(id), HOLD_FIELDS))
end

if ttl == 0 then ttl = tonumber(m[1]) end
local limit = tonumber(m[2])

local seats, price, pool = {}, 0, ''
local sec_meta = {}
local function section(s)
  local v = sec_meta[s]
  if v == nil then
    local raw
    if 's:' .. s == first_field then
      raw = m[4]
    else
      raw = redis.call('HGET', K.meta, 's:' .. s)
    end
    if raw then
      local p, t = string.match(raw, '^(%d+)|(%d+)$')
      v = { price = tonumber(p), total = tonumber(t) }
    else
      v = false
    end
    sec_meta[s] = v
  end
  return v
end

local secs, pool_cap, pool_price
if kind == 'seats' then
  seats = split(target, ',')
  local unknown = {}
  for _, sid in ipairs(seats) do
    local s, r, n = parse_seat(sid)
    local sm = s and section(s)
    if not sm or seat_char(s, r, n) == '' then
      unknown[#unknown + 1] = sid
    else
      price = price + sm.price
    end
  end
  if #unknown > 0 then return reply(0, fail('seat_not_found', 'seats', table.concat(unknown, ','))) end
  qty = #seats
elseif kind == 'section' then
  if not section(target) then return reply(0, fail('section_not_found')) end
  secs = { target }
elseif kind == 'tier' then
  local list = m[4]
  if not list then return reply(0, fail('tier_not_found')) end
  secs = split(list, ',')
else
  local raw = m[4]
  if not raw then return reply(0, fail('pool_not_found')) end
  local c, p = string.match(raw, '^(%d+)|(%d+)$')
  pool, pool_cap, pool_price = target, tonumber(c), tonumber(p)
end

if limit > 0 then
  local cur = tonumber(redis.call('HGET', K.users, user) or '0')
  if cur + qty > limit then
    return outcome(key, fp, fail('user_limit', 'limit', I(limit), 'current', I(cur)))
  end
end

local function free_in(list)
  local free = 0
  for _, s in ipairs(list) do
    local c = redis.call('HMGET', K.cnt, 'h:' .. s, 's:' .. s)
    free = free + section(s).total - (tonumber(c[1]) or 0) - (tonumber(c[2]) or 0)
  end
  return free
end
local function not_enough(free)
  if free == 0 then return outcome(key, fp, fail('sold_out')) end
  return outcome(key, fp, fail('not_enough_seats', 'available', I(free)))
end

if kind == 'seats' then
  local taken = {}
  for _, sid in ipairs(seats) do
    local s, r, n = parse_seat(sid)
    if seat_char(s, r, n) ~= '.' then taken[#taken + 1] = sid end
  end
  if #taken > 0 then return outcome(key, fp, fail('seat_unavailable', 'seats', table.concat(taken, ','))) end
elseif secs then
  -- Best available: the same ranking as inventory.BestBlock. Candidates
  -- are ordered by (orphan, row index, section index, distance from the
  -- row's centre, start); rows behind a clean choice cannot win.
  local rows, max_rows = {}, 0
  for si, s in ipairs(secs) do
    rows[si] = split(redis.call('HGET', K.meta, 'r:' .. s), ',')
    if #rows[si] > max_rows then max_rows = #rows[si] end
  end
  local best
  local function better(o, ri, si, d, st)
    if best == nil then return true end
    if o ~= best[1] then return o < best[1] end
    if ri ~= best[2] then return ri < best[2] end
    if si ~= best[3] then return si < best[3] end
    if d ~= best[4] then return d < best[4] end
    return st < best[5]
  end
  for ri = 1, max_rows do
    for si, s in ipairs(secs) do
      local rid = rows[si][ri]
      if rid then
        local row = row_get(s .. '-' .. rid)
        local len = #row
        for a1, b1 in string.gmatch(row, '()%.+()') do
          local a, b = a1 - 1, b1 - 2 -- 0-based, inclusive
          if b - a + 1 >= qty then
            local lo, hi = a, b - qty + 1
            local ideal = math.floor((len - qty) / 2)
            local function try(st)
              if st < lo or st > hi then return end
              local o = 0
              if st - a == 1 or b - (st + qty - 1) == 1 then o = 1 end
              local d = math.abs(2 * st + qty - len)
              if better(o, ri, si, d, st) then best = { o, ri, si, d, st, rid } end
            end
            try(lo)
            try(hi)
            for st = ideal - 2, ideal + 3 do try(st) end
          end
        end
      end
    end
    if best and best[1] == 0 then break end
  end
  if not best then return not_enough(free_in(secs)) end
  local s = secs[best[3]]
  for i = 1, qty do seats[i] = s .. '-' .. best[6] .. '-' .. I(best[5] + i) end
  price = section(s).price * qty
else
  local c = redis.call('HMGET', K.cnt, 'ph:' .. pool, 'ps:' .. pool)
  local free = pool_cap - (tonumber(c[1]) or 0) - (tonumber(c[2]) or 0)
  if free < qty then return not_enough(free) end
  price = pool_price * qty
end

local exp = NOW + ttl
local seat_list = table.concat(seats, ',')
if pool ~= '' then
  count('ph:' .. pool, qty)
else
  set_seats(seats, 'h')
end
flush()
add_user(user, qty)
local h = { id = id, u = user, seats = seat_list, pool = pool, q = I(qty), price = I(price), c = I(NOW),
  e = I(exp), st = 'held' }
put_hold(h)
redis.call('ZADD', K.exp, exp, id)
note_due(m, exp)
audit('hold', h.c, actor, user, id, '', seat_list, pool, h.q)
return outcome(key, fp, ok_fields(h, HOLD_FIELDS))
