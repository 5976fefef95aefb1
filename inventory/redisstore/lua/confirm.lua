-- confirm: ARGV[3] hold id, [4] new order id, [5] payment ref,
-- [6] idempotency key, [7] fingerprint, [8] actor.
local id, oid, pay, key, fp, actor = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]

if not open() then return reply(0, fail('event_not_found')) end
local replay = idem_check(key, fp)
if replay then return replay end

local h = get_hold(id)
if not h then return reply(0, fail('hold_not_found')) end
if h.st == 'confirmed' then
  local o = get_order(h.o)
  if o.st == 'cancelled' then return outcome(key, fp, fail('order_cancelled')) end
  return outcome(key, fp, ok_fields(o, ORDER_FIELDS))
elseif h.st == 'released' then
  return outcome(key, fp, fail('hold_released'))
elseif h.st == 'expired' then
  return outcome(key, fp, fail('hold_expired', 'e', h.e))
end

local q = tonumber(h.q)
if h.pool ~= '' then
  count('ph:' .. h.pool, -q)
  count('ps:' .. h.pool, q)
else
  set_seats(split(h.seats, ','), 's')
end
flush()
h.st, h.o = 'confirmed', oid
put_hold(h)
redis.call('ZREM', K.exp, id)
local o = { id = oid, h = id, u = h.u, seats = h.seats, pool = h.pool, q = h.q, price = h.price, pay = pay,
  st = 'confirmed', c = I(NOW) }
put_order(o)
audit('confirm', o.c, actor, h.u, id, oid, h.seats, h.pool, h.q)
return outcome(key, fp, ok_fields(o, ORDER_FIELDS))
