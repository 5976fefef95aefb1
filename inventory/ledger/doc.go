// Package ledger writes the seat-hold sidecar's full state of an event
// as JSON Lines (Export: its definition, every numbered seat with its
// state, the GA pools' counts, the live holds, every order, and the
// audit stream's position) and reconciles the seats it sold against the
// origin's own orders (Reconcile), so that an operator can snapshot an
// event before and after a sale and check it against the shop.
//
// Both read through an inventory.Store: the store itself (opened from
// the configuration) or the sidecar's HTTP API (inventory/client, which
// implements the interface). They stream: holds and orders are found by
// walking the audit stream a page at a time, and written as they are
// read, so a large event is never in memory at once (Reconcile keeps the
// sold seats' ids, a few megabytes for 100,000 seats). They change
// nothing. Functions are safe for concurrent use.
package ledger
