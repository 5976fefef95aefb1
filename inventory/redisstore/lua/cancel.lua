-- cancel: ARGV[3] order id, [4] reason, [5] actor.
local oid, reason, actor = ARGV[3], ARGV[4], ARGV[5]

if not defined() then return reply(0, fail('event_not_found')) end
sweep(-1)
local o = get_order(oid)
if not o then return reply(0, fail('order_not_found')) end
if o.st == 'confirmed' then
  local q = tonumber(o.q)
  if o.pool ~= '' then
    redis.call('HINCRBY', K.cnt, 'ps:' .. o.pool, -q)
  else
    set_seats(split(o.seats, ','), '.')
    flush()
  end
  add_user(o.u, -q)
  redis.call('HSET', order_key(oid), 'st', 'cancelled', 'x', I(NOW))
  if reason ~= '' then redis.call('HSET', order_key(oid), 'reason', reason) end
  audit({ 'a', 'cancel', 'at', I(NOW), 'actor', actor, 'u', o.u, 'h', o.h, 'o', oid, 'seats', o.seats, 'pool', o.pool, 'q', o.q })
  o = get_order(oid)
end
return reply(0, ok_fields(o, ORDER_FIELDS))
