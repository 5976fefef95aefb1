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
// seats; the engine compensates for no-shows. ETAs come from a
// conservative estimate of the admission rate (RateEstimator).
//
// The Engine runs the queues over a Store: memstore (embedded, one
// process) or redisstore (several replicas; one leader per event, elected
// with a lease, runs the draws and the controller, the others follow).
// Backends register by name in Stores (each backend's register.go), and
// the binary builds the one admission.store names from there.
// Tokens and invite codes are in tokens.go and invite.go, the presale
// allowlist in allowlist.go. The design and its contracts are in
// docs/admission.md.
//
// It does not speak HTTP: the proxy (package proxy) turns requests into
// Join and Status calls and measures the origin for the controller.
package admission
