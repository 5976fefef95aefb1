// Package webhook is the "webhook" event sink: it POSTs each
// plugins.Event as JSON to a configured URL, signed with HMAC-SHA256 so
// the receiver can tell it came from waitroom and reject old replays.
//
// Every request carries:
//
//	Content-Type: application/json
//	X-Waitroom-Event: <kind>
//	Idempotency-Key: <event id, also the body's "id">
//	X-Waitroom-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">
//
// Publish never blocks: events wait in a bounded queue for a few delivery
// workers, and what does not fit is dropped and counted (Stats). A failed
// delivery is retried with exponential backoff and jitter on network
// errors, timeouts, 408, 429 (honouring Retry-After) and 5xx; other
// answers are final. A retry re-signs the same body with a fresh time and
// the same Idempotency-Key, so the receiver can deduplicate. Receivers
// check requests with VerifySignature.
//
// Several workers deliver at once, so events may arrive in another order
// than they happened; a receiver orders them by the body's "at".
//
// It is not a durable queue: events still queued when the process dies,
// or when Close's context ends, are lost. Use it for notifications and
// analytics, not as the record of sales (the inventory sidecar is that).
package webhook
