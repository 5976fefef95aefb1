// Package memstore is the in-process challenge.ReplayGuard: it remembers
// redeemed challenge ids in memory, for a waitroom that runs as one
// process (the embedded admission store).
//
// It keeps an exact set of redeemed ids, each until its expiry and at
// most MaxExact of them, and a pair of Bloom filters holding ids by the
// window their expiry falls in (windows are Window plus WindowSlack
// long): the filter of the current window and the next. When time enters
// a new window, the filter of the window that ended, whose ids have all
// expired, is cleared and becomes the next one's. Every live id that
// expires within the pair's reach is in a filter, so when the exact set
// is full its earliest-expiring ids are dropped from it without ever
// letting a replay through: Redeem refuses an id found in the exact set
// or in either filter, and checks and marks under one mutex.
//
// The filters' false-positive rate is the chance that a fresh id is
// refused as if it were a replay: the visitor solves a new challenge. It
// holds while no window sees more than ExpectedPerWindow ids; beyond
// that, refusals grow more frequent, but a replay is still never
// accepted. An id whose mark expired may likewise be refused until its
// window has passed. An id that lives longer than Window (plus the
// slack) may expire beyond the filters' reach: the exact set then keeps
// it until it comes within reach, and Redeem fails with ErrFull rather
// than drop it when such ids fill the set.
//
// Memory, with the defaults: two filters of 3.6 MB and an exact set of
// up to 100,000 ids (about 13 MB): some 20 MB in all.
//
// It is not for several processes: their guards would not see each
// other's redemptions. Use redisstore for replicas.
package memstore
