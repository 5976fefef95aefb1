// Package webhook is the "webhook" event sink: it POSTs each
// plugins.Event as JSON to a configured URL, signed per the Standard
// Webhooks specification (https://www.standardwebhooks.com/) so the
// receiver can tell it came from waitroom and reject old replays.
//
// Every request carries:
//
//	Content-Type: application/json
//	webhook-id: <event id, also the body's "id"; the same on every attempt>
//	webhook-timestamp: <unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">
//	X-Waitroom-Event: <kind>
//	Idempotency-Key: <the event id again>
//	X-Waitroom-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">
//
// The secret is either whsec_<base64 key> (what Standard Webhooks
// libraries take) or a plain string used as the key as it is; a
// Standard Webhooks library is then given "whsec_" + base64(secret).
// X-Waitroom-Signature is kept for receivers written against it, with
// the same key.
//
// Publish never blocks: events wait in a bounded queue for a few delivery
// workers, and what does not fit is dropped and counted (Stats). A failed
// delivery is retried with exponential backoff and jitter on network
// errors, timeouts, 408, 429 (honouring Retry-After) and 5xx; other
// answers are final. A retry re-signs the same body with a fresh time
// under the same id, so the receiver can deduplicate. An event that
// names its own ID (the inventory events carry one derived from the
// sidecar's audit entry) keeps it across replicas and restarts too.
// Receivers in Go check requests with Verify (or VerifySignature for the
// older header).
//
// Several workers deliver at once, so events may arrive in another order
// than they happened; a receiver orders them by the body's "at".
//
// It is not a durable queue: events still queued when the process dies,
// or when Close's context ends, are lost. Use it for notifications and
// analytics, not as the record of sales (the inventory sidecar is that).
package webhook
