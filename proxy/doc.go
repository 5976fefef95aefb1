// Package proxy is waitroom's front server: a fasthttp reverse proxy that
// routes every request, lets visitors with a valid pass through to the
// origin, and holds everyone else in the waiting room.
//
// # One request
//
//  1. httpguard checks the request's framing (request smuggling shapes are
//     refused with 400; oversized headers with 431).
//  2. The request-target is parsed and normalised once (proxy/target):
//     ambiguous shapes are refused with 400, CONNECT (and TRACE unless a
//     route allows it) with 405. The normalised path is what routes match
//     and exactly what the origin receives.
//  3. Paths under the reserved prefix (default /_wr) are waitroom's own:
//     the waiting-room API (status, join, draw audits), the auth_request
//     endpoint, the JWKS and the page's assets.
//  4. Otherwise the first matching route decides: pass routes go to their
//     origin; queue and block routes need a valid pass for their event.
//     Bypass rules (CIDRs, a secret header) skip the check and are counted.
//     Without a valid pass, an allowlisted crawler (Options.Crawlers: its
//     User-Agent and its published address ranges both match) passes a
//     queue route as it is, with no ticket or pass (crawler.go).
//  5. A pass is valid when its signature, expiry, event and device binding
//     check out and it is not revoked. Verified passes are cached (an LRU
//     keyed by a seeded hash of the token, compared in full), so the hot
//     path does one lookup and no cryptography, and allocates nothing.
//  6. A request with a valid pass is forwarded with X-Waitroom-Visitor and
//     X-Waitroom-Event set (clients cannot set them) and measured for the
//     admission controller (rate, latency, errors, in-flight, active
//     visitors, completions signalled by the origin's X-Waitroom-Complete
//     response header). Without one, a queue route answers with the
//     waiting-room page (or the status JSON for Accept: application/json)
//     and a block route with 403.
//  7. A pass with less than half a session left is renewed on the
//     response to the next such request (renew.go): one comparison with
//     the due time kept in the cache entry; signing only then, once per
//     pass, never for a revoked or completed visitor, never beyond the
//     event's MaxSession, and only on responses shared caches do not keep.
//
// # Limits
//
// Every request takes a slot of Options.Budget (serve.max_in_flight) for
// its class while it is handled: the waiting room's own paths and pages
// (netlimit.API), a request with a valid pass or a bypass on a gated
// route (netlimit.Admitted), anything else forwarded (netlimit.Anonymous).
// Each class keeps its reserved share; a request its class may not take a
// slot for gets 503 with Retry-After. The front server (Server) cuts off
// a head slower than ServerConfig.HeaderTimeout and a body slower than
// BodyTimeout / BodyMinRate / ReadTimeout with 408; a body's first bytes
// must arrive before the request takes an origin slot or connection.
// Connection limits and accept back-off are proxy/netlimit's, on the
// listeners. An origin that refuses the connection or does not answer in
// time gets the client 502 or 504 with Retry-After: the "site not
// answering" page (static.Pages.Down) when the client asks for text/html,
// which retries by itself, and the JSON error otherwise.
//
// # The waiting-room API
//
//	GET  {prefix}/api/status?event=E[&return=/path]   status JSON; sets the pass cookie when admitted
//	POST {prefix}/api/join   {"event":E, ...}          ticket cookie + status JSON
//	GET  {prefix}/api/draws/{event}/{tranche}          the draw audit
//	POST {prefix}/nojs/join  event=E[&return=/path]    the form of a browser without JavaScript: 303 to nojs/status
//	GET  {prefix}/nojs/status?event=E&return=/path     the status as a page that reloads itself; 303 with the pass once admitted
//	GET  {prefix}/api/session?event=E                  the visitor's pass: seconds left, renewable
//	GET  {prefix}/session.js?event=E                   the session banner script for origins' pages
//	GET  {prefix}/auth                                 204 / 401 / 403 for nginx auth_request
//	GET  {prefix}/jwks.json                            public keys of EdDSA passes
//
// The no-JS endpoints (nojs.go) take joins only for events without a
// challenge, so the form is never a cheaper way in than the scripted join.
//
// Status for a drawn ticket reads only the ticket (cached once verified)
// and the engine's in-memory counters: no store lookup per poll. The API
// is rate limited per client address and per address prefix.
//
// The operator API (Admin) is a separate net/http handler for a private
// listener. What this package is not: it does not decide who is admitted
// (package admission does), render the page (package static), or talk
// to origins itself (proxy/upstream does, with proxy/httpguard's checks).
package proxy
