// Package inventory is waitroom's seat-hold engine: the part that must
// never sell a seat twice.
//
// Seats move available → held → sold, held → available on release or
// expiry, and sold → available when an order is cancelled. A hold is live
// only while its expiry is in the future; every Store operation treats an
// expired hold as gone, so correctness never depends on the Reaper, which
// only tidies up. Holds are all-or-nothing, best-available finds adjacent
// seats in one atomic step (BestBlock), and per-user limits and
// idempotency keys are checked inside that same step.
//
// The package holds the types, the Store interface, validation, the
// best-available rules and the Reaper. Implementations live in memstore
// (embedded, journaled) and redisstore (Redis, Lua), each registered by
// name in Stores for inventory.store to name; the HTTP API is in
// inventory/api and a Go client for origins in inventory/client. One
// conformance suite (inventorytest) holds every Store to the same
// behaviour.
//
// It is not the waiting room: admission, tickets and passes live in
// package admission.
package inventory
