-- cancel: ARGV[3] order id, [4] reason, [5] actor.
local oid, reason, actor = ARGV[3], ARGV[4], ARGV[5]

if not open() then return reply(0, fail('event_not_found')) end
local o = get_order(oid)
if not o then return reply(0, fail('order_not_found')) end
if o.st == 'confirmed' then
  local q = tonumber(o.q)
  if o.pool ~= '' then
    count('ps:' .. o.pool, -q)
  else
    set_seats(split(o.seats, ','), '.')
  end
  flush()
  add_user(o.u, -q)
  o.st, o.x, o.reason = 'cancelled', I(NOW), reason
  put_order(o)
  audit('cancel', o.x, actor, o.u, o.h, oid, o.seats, o.pool, o.q)
end
return reply(0, ok_fields(o, ORDER_FIELDS))
