// Package admission is the waiting room's engine: who gets in, in what
// order, how fast, and what each waiting visitor is told.
//
// Visitors join an event's lane and get a ticket (a JWT). Arrivals are
// grouped in tranches (the pre-queue, then one per few seconds); when a
// tranche closes its members are ordered by HMAC-SHA256(seed,
// SHA-256(visitor id)) and numbered after the previous tranche, with the
// seed committed before the close and revealed after, so that anyone can
// recompute the published order (Order, CheckAudit). A serving counter per
// lane, held in memory and raised by the controller each tick, admits
// every number at or below it: a status poll is number − serving, with no
// store access and no allocation. An admitted visitor gets a pass.
//
// The controller (Controller) sizes admission by what the origin is
// measured to take: an additive-increase, multiplicative-decrease limit on
// active visitors, bounded by caps and by the linked inventory's remaining
// seats; the engine compensates for no-shows: visitors reached whose pass
// never went through the gate (the proxy reports each pass's first use
// with NoteUse). ETAs come from a
// conservative estimate of the admission rate (RateEstimator).
//
// The queue's decisions are all made here: Arrive answers a join (a new
// place, the shadow queue when the bot defence asks for it, a returning
// visitor's place and pass, or a status without a place before opening,
// once closed or sold out), Status answers a poll. Shadow visitors are
// marked in their ids and never admitted (shadow.go). A join with an
// account the origin vouched for (JoinRequest.Account) gets the account's
// first place, recorded atomically in the store, on every device and
// replica (account.go); the origin's signed identity is identity.go.
//
// The Engine runs the queues over a Store: memstore (embedded, one
// process) or redisstore (several replicas; one leader per event, elected
// with a lease, runs the draws and the controller, the others follow).
// Backends register by name in Stores (each backend's register.go), and
// the binary builds the one admission.store names from there.
//
// By concept: the engine and its events in engine.go, joins in arrive.go,
// polls in status.go, the tick (lease, draws, following the store) in
// tick.go, the controller's advance in regulate.go, pass uses (the
// buffer every replica flushes) in uses.go, operator calls in
// operator.go; tickets and passes in tokens.go, their keys in keyring.go,
// the claims decoder in claims.go, invite codes in invite.go, the presale
// allowlist in allowlist.go. The design and its contracts are in
// docs/admission.md.
//
// It does not speak HTTP: the proxy (package proxy) turns requests into
// Arrive and Status calls, signs what they hand out, and measures the
// origin for the controller.
package admission
