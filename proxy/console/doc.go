// Package console is the operator dashboard at /admin/ on the admin
// listener: a login form that takes the admin token and sets a signed,
// expiring session cookie (HttpOnly, SameSite=Strict, Path=/admin/,
// Secure over TLS), every event's live figures (state and mode, queue
// and its change, arrivals and admissions per minute, active visitors,
// the controller's target and why it moved, origin p50/p99 and errors,
// no-shows, the wait at the back of the queue, seats left, the bot
// defence's actions by band) with charts of the last hour pushed over
// server-sent events, and buttons for the operator's changes (pause and
// resume, caps, mode, sold out, a notice to visitors).
//
// The changes go through the same engine operations as the admin API
// (admission.Engine.UpdateControl), so every replica follows within a
// tick. POSTs are refused unless they come from the console's own page:
// http.CrossOriginProtection (Sec-Fetch-Site, Origin) and the session's
// CSRF token, an HMAC of the session id. Failed logins are rate limited
// per client address. The page's script and style are embedded and
// served from /admin/assets/; its Content-Security-Policy allows nothing
// inline and nothing from another origin.
//
// The history the charts draw is in memory, per replica, sampled every
// Options.Sample (DefaultSample) and kept for History: it is what this
// replica saw, and starts empty after a restart. It is not the post-sale
// report (that is kept in the admission store) and not a metrics store
// (Prometheus scrapes /metrics for that).
package console
