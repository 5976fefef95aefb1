// Package api is the seat-hold sidecar's HTTP API: JSON over HTTP/1.1 in
// front of an inventory.Store, served with fasthttp on its own listener.
// Origins call it to define events, hold, confirm and release seats, and
// cancel orders; inventory/client is the Go client for it, and
// openapi.yaml (served at GET /v1/openapi.yaml) is the contract.
//
// Every endpoint but /healthz, /readyz and /v1/openapi.yaml needs
// "Authorization: Bearer <token>". Every error is
// {"error": "<code>", "message": "<text>"} with the code's status (one
// table, errorStatus) and the code's details (unavailable, unknown, pools,
// limit, current, available). A storage failure is logged with its text;
// the client sees only {"error": "unavailable"} and a 503.
//
// Request bodies and paths are untrusted input: bodies are decoded
// strictly by internal/jsonstrict (one JSON object, known fields spelled
// exactly, no duplicates, valid UTF-8, bounded size) and path segments are
// percent-decoded one by one and validated before any store call.
// Malformed input gets a 400 and changes nothing.
//
// Extensions beyond the contract: ttl_ms in a hold body (hold
// lifetimes below a second, for tests and demos), GET /v1/events,
// GET /v1/events/{event}, GET /v1/events/{event}/orders/{order} and
// GET /v1/openapi.yaml.
//
// It is not the waiting room's front server (package proxy), and it holds
// no inventory logic: every rule lives in the Store.
package api
