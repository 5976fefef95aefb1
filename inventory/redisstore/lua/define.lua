-- define: ARGV[3] normalized definition (JSON), ARGV[4] actor.
-- Refuses (changing nothing) to drop or shrink below a held or sold seat
-- or GA place; otherwise installs the plan and keeps every seat's state.
local def = cjson.decode(ARGV[3])
local actor = ARGV[4]

local size = {} -- "S-R" -> seats in the new plan
for _, s in ipairs(def.sections) do
  for _, r in ipairs(s.rows) do size[s.id .. '-' .. r.id] = r.seats end
end
local capacity = {}
for _, p in ipairs(def.ga) do capacity[p.id] = p.capacity end

local old_rows = {}
if defined() then
  sweep(-1)
  local blocked, pools = {}, {}
  for _, sec in ipairs(split(redis.call('HGET', K.meta, 'secs'), ',')) do
    for _, r in ipairs(split(redis.call('HGET', K.meta, 'r:' .. sec), ',')) do
      local rk = sec .. '-' .. r
      local st = row_get(rk) or ''
      old_rows[rk] = st
      local keep = size[rk] or 0
      for n = keep + 1, #st do
        if string.sub(st, n, n) ~= '.' and #blocked < 100 then
          blocked[#blocked + 1] = rk .. '-' .. n
        end
      end
    end
  end
  for _, pool in ipairs(split(redis.call('HGET', K.meta, 'pools'), ',')) do
    local c = redis.call('HMGET', K.cnt, 'ph:' .. pool, 'ps:' .. pool)
    if (tonumber(c[1]) or 0) + (tonumber(c[2]) or 0) > (capacity[pool] or 0) then
      pools[#pools + 1] = pool
    end
  end
  if #blocked > 0 or #pools > 0 then
    return reply(0, fail('definition_conflict', 'seats', table.concat(blocked, ','), 'pools', table.concat(pools, ',')))
  end
  -- Drop what the new plan no longer has (all of it free, checked above).
  for _, pool in ipairs(split(redis.call('HGET', K.meta, 'pools'), ',')) do
    if not capacity[pool] then redis.call('HDEL', K.cnt, 'ph:' .. pool, 'ps:' .. pool) end
  end
  for rk in pairs(old_rows) do
    if not size[rk] then redis.call('DEL', row_key(rk)) end
  end
  redis.call('DEL', K.meta)
  local cnt = redis.call('HKEYS', K.cnt)
  for _, f in ipairs(cnt) do
    if string.sub(f, 1, 2) == 'h:' or string.sub(f, 1, 2) == 's:' then redis.call('HDEL', K.cnt, f) end
  end
end

local meta = { 'def', ARGV[3], 'ttl', I(def.hold_ttl_seconds * 1000), 'limit', I(def.limits.per_user),
  'maxhold', I((def.max_hold_seconds or 0) * 1000) }
local secs, pools, tiers, tier_order = {}, {}, {}, {}
local seats_total = 0
for _, s in ipairs(def.sections) do
  secs[#secs + 1] = s.id
  local rows, total, held, sold = {}, 0, 0, 0
  for _, r in ipairs(s.rows) do
    local rk = s.id .. '-' .. r.id
    rows[#rows + 1] = r.id
    local st = old_rows[rk] or ''
    if #st > r.seats then
      st = string.sub(st, 1, r.seats)
    elseif #st < r.seats then
      st = st .. string.rep('.', r.seats - #st)
    end
    local _, h = string.gsub(st, 'h', 'h')
    local _, so = string.gsub(st, 's', 's')
    held, sold, total = held + h, sold + so, total + r.seats
    redis.call('SET', row_key(rk), st)
  end
  seats_total = seats_total + total
  meta[#meta + 1] = 's:' .. s.id
  meta[#meta + 1] = I(s.price_cents) .. '|' .. I(total)
  meta[#meta + 1] = 'r:' .. s.id
  meta[#meta + 1] = table.concat(rows, ',')
  if held > 0 then redis.call('HSET', K.cnt, 'h:' .. s.id, held) end
  if sold > 0 then redis.call('HSET', K.cnt, 's:' .. s.id, sold) end
  if s.tier and s.tier ~= '' then
    if not tiers[s.tier] then tiers[s.tier] = {}; tier_order[#tier_order + 1] = s.tier end
    table.insert(tiers[s.tier], s.id)
  end
end
for _, t in ipairs(tier_order) do
  meta[#meta + 1] = 't:' .. t
  meta[#meta + 1] = table.concat(tiers[t], ',')
end
local ga_total = 0
for _, p in ipairs(def.ga) do
  pools[#pools + 1] = p.id
  ga_total = ga_total + p.capacity
  meta[#meta + 1] = 'p:' .. p.id
  meta[#meta + 1] = I(p.capacity) .. '|' .. I(p.price_cents)
end
meta[#meta + 1] = 'secs'
meta[#meta + 1] = table.concat(secs, ',')
meta[#meta + 1] = 'pools'
meta[#meta + 1] = table.concat(pools, ',')
hset_many(K.meta, meta)
-- The meta hash was rewritten: restore the expiry bound (see sweep).
local first = redis.call('ZRANGE', K.exp, 0, 0, 'WITHSCORES')
if first[2] then redis.call('HSET', K.meta, 'due', first[2]) end
flush()
audit('define', I(NOW), actor)
return reply(0, { 'ok', '1', 'seats', I(seats_total), 'ga', I(ga_total) })
