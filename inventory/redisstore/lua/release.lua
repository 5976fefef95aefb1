-- release: ARGV[3] hold id, [4] idempotency key, [5] fingerprint, [6] actor.
local id, key, fp, actor = ARGV[3], ARGV[4], ARGV[5], ARGV[6]

if not open() then return reply(0, fail('event_not_found')) end
local replay = idem_check(key, fp)
if replay then return replay end

local h = get_hold(id)
if not h then return reply(0, fail('hold_not_found')) end
if h.st == 'confirmed' then return outcome(key, fp, fail('hold_confirmed')) end
local st = h.st
if st == 'held' then
  end_hold(id, 'released', NOW, actor)
  flush()
  st = 'released'
end
return outcome(key, fp, { 'ok', '1', 'id', id, 'st', st })
