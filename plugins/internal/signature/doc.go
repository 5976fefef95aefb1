// Package signature signs and verifies the bodies waitroom's outbound
// plugins send (webhook deliveries, external scorer requests) with
// HMAC-SHA256, in a Stripe-style header:
//
//	X-Waitroom-Signature: t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// where v1 is the hex HMAC-SHA256, keyed with the shared secret, of the
// unix time t, a dot, and the body. Because t is signed, a receiver can
// reject a captured request replayed later. A header may carry several
// v1 values (while a secret is being rotated); one matching is enough.
//
// Webhook deliveries are also signed per Standard Webhooks
// (SignStandard, VerifyStandard): webhook-id, webhook-timestamp and
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>", with
// a key given as whsec_<base64> (Key).
//
// It is not an authentication framework: it knows nothing of key storage,
// rotation schedules or which requests need signing. Receivers use
// webhook.VerifySignature, which wraps Verify.
package signature
