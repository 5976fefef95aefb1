// Package memstore is the in-process challenge.ReplayGuard: it remembers
// redeemed challenge ids in memory, for a waitroom that runs as one
// process (the embedded admission store).
//
// It keeps an exact set of redeemed ids, each until its expiry and at
// most MaxExact of them, and a pair of Bloom filters over ids by the
// window their expiry falls in: the filter of the current window and the
// next. When time enters a new window, the filter of the window that
// ended (whose ids have all expired) is cleared and becomes the next
// one's. Every live id with an expiry within the pair's reach is in a
// filter, so when the exact set is full the oldest-expiring ids can be
// dropped from it without ever letting a replay through: Redeem refuses
// an id found in either.
//
// The filters' false-positive rate is the chance that a fresh id is
// refused as if it were a replay (the visitor solves a new challenge). It
// holds while no window sees more than ExpectedPerWindow ids; beyond
// that, refusals grow more frequent, but a replay is still never
// accepted. An id whose mark expired may likewise be refused until its
// window passes.
//
// It is not for several processes: their guards would not see each
// other's redemptions. Use redisstore for replicas.
package memstore
