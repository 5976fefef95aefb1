// Package client is the Go client of the seat-hold sidecar's HTTP API
// (inventory/api), for origins written in Go. It uses only net/http.
//
// A *Client implements inventory.Store, so code written against the
// interface runs unchanged against the sidecar. Errors the sidecar answers
// with come back as *inventory.Error whose Kind is the sentinel of the
// wire code, so errors.Is(err, inventory.ErrSeatUnavailable) works and
// inventory.Details(err).Seats lists the seats. A result repeated for an
// idempotency key has Replayed set.
//
// A failure to reach the sidecar (or to read its answer) is a
// *TransportError: the request may or may not have been applied, so
// retry with the same Idempotency-Key. It is kept apart from
// inventory.ErrUnavailable, which is the sidecar's own answer that its
// store could not serve the request.
//
// It is not a store of its own and not the reaper: Reap is refused with
// ErrReapNotSupported because the sidecar reaps expired holds by itself.
package client
