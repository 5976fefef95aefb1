-- Seed: the first writer wins.
-- KEYS[1] the tranche's seed; ARGV[1] the proposal.
-- Returns the stored seed.
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
