-- extend: ARGV[3] hold id, [4] requested TTL from now (ms; 0: the
-- event's), [5] idempotency key, [6] fingerprint, [7] actor, [8] and [9]
-- the default maximum hold as a multiple of the TTL and its cap (ms), for
-- events defined before max_hold_seconds existed. The expiry becomes
-- NOW + TTL, never earlier than it was nor later than creation + the
-- event's maximum hold (inventory.ExtendRequest.ExtendedExpiry).
local id, ttl, key, fp, actor = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7]
local factor, cap = tonumber(ARGV[8]), tonumber(ARGV[9])

local m = open('maxhold')
if not m then return reply(0, fail('event_not_found')) end
local replay = idem_check(key, fp)
if replay then return replay end

local h = get_hold(id)
if not h then return reply(0, fail('hold_not_found')) end
if h.st == 'confirmed' then
  return outcome(key, fp, fail('hold_confirmed'))
elseif h.st == 'released' then
  return outcome(key, fp, fail('hold_released'))
elseif h.st == 'expired' then
  return outcome(key, fp, fail('hold_expired', 'e', h.e))
end

local def_ttl = tonumber(m[1])
if ttl == 0 then ttl = def_ttl end
local maxhold = tonumber(m[4])
if not maxhold or maxhold <= 0 then maxhold = math.min(factor * def_ttl, cap) end
local cur = tonumber(h.e)
local exp = math.max(cur, math.min(NOW + ttl, tonumber(h.c) + maxhold))
if exp > cur then
  h.e = I(exp)
  put_hold(h)
  redis.call('ZADD', K.exp, exp, id) -- "due" stays a lower bound: the expiry only moved later
  audit('extend', I(NOW), actor, h.u, id, '', h.seats, h.pool, h.q)
end
return outcome(key, fp, ok_fields(h, HOLD_FIELDS))
