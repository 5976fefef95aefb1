// Package scorer is the "http" external scorer: a challenge.Signal that
// asks a site's own bot detection, over HTTP, how suspicious a join
// request looks. It POSTs the request's signals as JSON,
//
//	{"event":"tour-2026","ip":"203.0.113.7","headers":[["Host","shop.example.com"],["User-Agent","..."]],"ja4":"t13d1516h2_...","visitor":"v-123"}
//
// (headers in wire order, names as sent, minus omit_headers), optionally
// with a bearer token and an X-Waitroom-Signature HMAC (the webhook
// scheme; receivers can check it with webhook.VerifySignature), and
// expects {"score": 0..100, "reason": "..."} back. The score becomes the
// finding's suspicion (score/100), the reason "external:<reason>",
// reduced to a short [a-z0-9_] word so it is safe to count in metrics.
//
// The call has a strict timeout (150ms by default): a scorer that is
// slow, down or answers nonsense yields an error, which scoring logs and
// counts as zero. It is not a place for the site's detection logic, and
// it caches nothing: every scoring asks.
package scorer
