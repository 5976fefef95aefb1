-- read: ARGV[3] what (event|hold|order|availability|seats|reap|sync),
-- ARGV[4] its argument. Reads expire due holds first so that what they
-- report is exact; "reap" expires at most ARGV[4] of them and nothing else.
local what, arg = ARGV[3], ARGV[4]
if what == 'reap' then
  if not defined() then return reply(0, fail('event_not_found')) end
  return reply(0, { 'ok', '1', 'n', I(sweep(tonumber(arg))) })
end
if not open() then return reply(0, fail('event_not_found')) end
if what == 'event' or what == 'sync' then
  return reply(0, { 'ok', '1', 'def', redis.call('HGET', K.meta, 'def') })
elseif what == 'hold' then
  local h = get_hold(arg)
  if not h then return reply(0, fail('hold_not_found')) end
  return reply(0, ok_fields(h, HOLD_FIELDS))
elseif what == 'order' then
  local o = get_order(arg)
  if not o then return reply(0, fail('order_not_found')) end
  return reply(0, ok_fields(o, ORDER_FIELDS))
elseif what == 'availability' then
  local out = { 'ok', '1' }
  for _, s in ipairs(split(redis.call('HGET', K.meta, 'secs'), ',')) do
    local total = string.match(redis.call('HGET', K.meta, 's:' .. s), '|(%d+)$')
    local c = redis.call('HMGET', K.cnt, 'h:' .. s, 's:' .. s)
    out[#out + 1] = 's:' .. s
    out[#out + 1] = total .. '|' .. (c[1] or '0') .. '|' .. (c[2] or '0')
  end
  for _, p in ipairs(split(redis.call('HGET', K.meta, 'pools'), ',')) do
    local cap = string.match(redis.call('HGET', K.meta, 'p:' .. p), '^(%d+)|')
    local c = redis.call('HMGET', K.cnt, 'ph:' .. p, 'ps:' .. p)
    out[#out + 1] = 'p:' .. p
    out[#out + 1] = cap .. '|' .. (c[1] or '0') .. '|' .. (c[2] or '0')
  end
  return reply(0, out)
elseif what == 'seats' then
  local rows = redis.call('HGET', K.meta, 'r:' .. arg)
  if not rows then return reply(0, fail('section_not_found')) end
  local out = { 'ok', '1' }
  for _, r in ipairs(split(rows, ',')) do
    out[#out + 1] = r
    out[#out + 1] = row_get(arg .. '-' .. r)
  end
  return reply(0, out)
end
return reply(0, fail('invalid_request'))
