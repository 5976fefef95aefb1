-- confirm: ARGV[3] hold id, [4] new order id, [5] payment ref,
-- [6] idempotency key, [7] fingerprint, [8] actor.
local id, oid, pay, key, fp, actor = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]

if not defined() then return reply(0, fail('event_not_found')) end
sweep(-1)
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
  redis.call('HINCRBY', K.cnt, 'ph:' .. h.pool, -q)
  redis.call('HINCRBY', K.cnt, 'ps:' .. h.pool, q)
else
  set_seats(split(h.seats, ','), 's')
  flush()
end
local hk = hold_key(id)
redis.call('HSET', hk, 'st', 'confirmed', 'o', oid)
redis.call('PERSIST', hk)
redis.call('ZREM', K.exp, id)
redis.call('HSET', order_key(oid), 'h', id, 'u', h.u, 'seats', h.seats, 'pool', h.pool, 'q', h.q, 'price', h.price,
  'pay', pay, 'st', 'confirmed', 'c', I(NOW))
audit({ 'a', 'confirm', 'at', I(NOW), 'actor', actor, 'u', h.u, 'h', id, 'o', oid, 'seats', h.seats, 'pool', h.pool, 'q', h.q })
return outcome(key, fp, ok_fields(get_order(oid), ORDER_FIELDS))
