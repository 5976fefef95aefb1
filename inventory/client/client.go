package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// DefaultTimeout bounds one call of the default HTTP client.
const DefaultTimeout = 30 * time.Second

// DefaultUserAgent is sent unless WithUserAgent says otherwise.
const DefaultUserAgent = "waitroom-inventory-client/1"

// Bounds on what the client reads back. A seat map of the largest
// section (a million seats) fits in the first.
const (
	maxResponseBytes = 256 << 20
	maxErrorBytes    = 1 << 20
)

// Client talks to one sidecar. It is safe for concurrent use; build one
// per sidecar and share it.
type Client struct {
	base  string // scheme://host[:port][/prefix], no trailing slash
	auth  string // "Bearer <token>"
	hc    *http.Client
	actor string
	ua    string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client use hc (its transport, timeouts and
// proxy settings).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// WithActor names the caller in the audit stream (X-Waitroom-Actor) when
// a request does not name one itself.
func WithActor(actor string) Option {
	return func(c *Client) { c.actor = actor }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.ua = ua }
}

// New returns a client of the sidecar at baseURL (for example
// "http://127.0.0.1:8081") that sends token as its bearer token.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), auth: "Bearer " + token, ua: DefaultUserAgent}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		c.hc = &http.Client{Transport: t, Timeout: DefaultTimeout}
	}
	return c
}

// call is one request.
type call struct {
	method, path string
	query        url.Values
	key, actor   string // headers; "" leaves them out
	body         any    // nil: no body
}

// do runs c and decodes a 2xx answer into out. replayed reports
// Idempotent-Replayed: true.
func (c *Client) do(ctx context.Context, k call, out any) (replayed bool, err error) {
	for name, v := range map[string]string{"Idempotency-Key": k.key, "X-Waitroom-Actor": k.actor} {
		if !headerSafe(v) {
			return false, inventory.Errorf(inventory.ErrInvalid, "%s: must not contain control characters or start or end with a space", name)
		}
	}
	target := c.base + k.path
	if len(k.query) > 0 {
		target += "?" + k.query.Encode()
	}
	var body io.Reader
	if k.body != nil {
		b, err := json.Marshal(k.body)
		if err != nil {
			return false, fmt.Errorf("client: encoding the request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, k.method, target, body)
	if err != nil {
		return false, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if k.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if k.key != "" {
		req.Header.Set("Idempotency-Key", k.key)
	}
	if k.actor != "" {
		req.Header.Set("X-Waitroom-Actor", k.actor)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("client: %s %s: %w", k.method, k.path, ctx.Err())
		}
		return false, &TransportError{Method: k.method, Path: k.path, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return false, c.errorOf(resp)
	}
	if out != nil {
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(out); err != nil {
			return false, &TransportError{Method: k.method, Path: k.path, Err: fmt.Errorf("reading the answer: %w", err)}
		}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // let the connection be reused
	return resp.Header.Get("Idempotent-Replayed") == "true", nil
}

// errorOf reads an error answer.
func (c *Client) errorOf(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var w wireError
	if json.Unmarshal(b, &w) != nil || w.Error == "" {
		return &ResponseError{StatusCode: resp.StatusCode}
	}
	return w.toError(resp.StatusCode)
}

// headerSafe reports whether v survives as a header value unchanged: no
// control characters, no surrounding blanks (which servers trim).
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return false
		}
	}
	return v == "" || v[0] != ' ' && v[len(v)-1] != ' '
}

// seg escapes one path segment; dot segments are escaped too, so that no
// one on the way resolves them.
func seg(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

func eventPath(event string) string { return "/v1/events/" + seg(event) }

func (c *Client) actorOr(a string) string {
	if a != "" {
		return a
	}
	return c.actor
}

// PutEvent defines or updates an event (PUT /v1/events/{event}).
func (c *Client) PutEvent(ctx context.Context, event string, def inventory.EventDef, actor string) (inventory.Event, error) {
	var ev inventory.Event
	_, err := c.do(ctx, call{method: http.MethodPut, path: eventPath(event), actor: c.actorOr(actor), body: def}, &ev)
	return ev, err
}

// Event returns a stored definition (GET /v1/events/{event}).
func (c *Client) Event(ctx context.Context, event string) (inventory.Event, error) {
	var ev inventory.Event
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event)}, &ev)
	return ev, err
}

// Events lists the defined events (GET /v1/events).
func (c *Client) Events(ctx context.Context) ([]string, error) {
	var out struct {
		Events []string `json:"events"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/events"}, &out)
	return out.Events, err
}

// holdWire is the hold body on the wire.
type holdWire struct {
	User       string                 `json:"user"`
	Seats      []string               `json:"seats,omitzero"` // nil: absent; empty: [] (which the sidecar refuses)
	Best       *inventory.BestRequest `json:"best,omitempty"`
	GA         *inventory.GARequest   `json:"ga,omitempty"`
	TTLSeconds int                    `json:"ttl_seconds,omitempty"`
	TTLMillis  int64                  `json:"ttl_ms,omitempty"`
}

// Hold claims seats (POST /v1/events/{event}/holds). A TTL of whole
// seconds travels as ttl_seconds, one with a sub-second part as ttl_ms; a
// TTL finer than a millisecond cannot travel and is refused with
// ErrInvalid.
func (c *Client) Hold(ctx context.Context, event string, req inventory.HoldRequest) (inventory.Hold, error) {
	w := holdWire{User: req.User, Seats: req.Seats, Best: req.Best, GA: req.GA, TTLSeconds: req.TTLSeconds}
	switch {
	case req.TTL == 0:
	case req.TTL < 0 || req.TTL%time.Millisecond != 0:
		return inventory.Hold{}, inventory.Errorf(inventory.ErrInvalid, "ttl: must be a positive whole number of milliseconds")
	case req.TTL%time.Second == 0 && req.TTLSeconds == 0:
		w.TTLSeconds = int(req.TTL / time.Second)
	default:
		w.TTLMillis = req.TTL.Milliseconds()
	}
	var h inventory.Hold
	replayed, err := c.do(ctx, call{method: http.MethodPost, path: eventPath(event) + "/holds",
		key: req.IdempotencyKey, actor: c.actorOr(req.Actor), body: w}, &h)
	h.Replayed = replayed
	return h, err
}

// GetHold returns a hold and its status (GET .../holds/{hold}).
func (c *Client) GetHold(ctx context.Context, event, hold string) (inventory.Hold, error) {
	var h inventory.Hold
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event) + "/holds/" + seg(hold)}, &h)
	return h, err
}

// Confirm sells a live hold's seats (POST .../holds/{hold}/confirm).
func (c *Client) Confirm(ctx context.Context, event, hold string, req inventory.ConfirmRequest) (inventory.Order, error) {
	var o inventory.Order
	replayed, err := c.do(ctx, call{method: http.MethodPost, path: eventPath(event) + "/holds/" + seg(hold) + "/confirm",
		key: req.IdempotencyKey, actor: c.actorOr(req.Actor), body: struct {
			PaymentRef string `json:"payment_ref,omitempty"`
		}{req.PaymentRef}}, &o)
	o.Replayed = replayed
	return o, err
}

// Extend keeps a live hold alive for longer (POST
// .../holds/{hold}/extend): its expiry becomes the TTL from now (the
// event's hold TTL when req names none), bounded by the event's maximum
// hold time; repeating it does not add up. A TTL travels as in Hold.
func (c *Client) Extend(ctx context.Context, event, hold string, req inventory.ExtendRequest) (inventory.Hold, error) {
	var w struct {
		TTLSeconds int   `json:"ttl_seconds,omitempty"`
		TTLMillis  int64 `json:"ttl_ms,omitempty"`
	}
	switch {
	case req.TTL == 0:
		w.TTLSeconds = req.TTLSeconds
	case req.TTL < 0 || req.TTL%time.Millisecond != 0:
		return inventory.Hold{}, inventory.Errorf(inventory.ErrInvalid, "ttl: must be a positive whole number of milliseconds")
	case req.TTL%time.Second == 0:
		w.TTLSeconds = int(req.TTL / time.Second)
	default:
		w.TTLMillis = req.TTL.Milliseconds()
	}
	var h inventory.Hold
	replayed, err := c.do(ctx, call{method: http.MethodPost, path: eventPath(event) + "/holds/" + seg(hold) + "/extend",
		key: req.IdempotencyKey, actor: c.actorOr(req.Actor), body: w}, &h)
	h.Replayed = replayed
	return h, err
}

// Release gives a hold's seats back (DELETE .../holds/{hold}).
func (c *Client) Release(ctx context.Context, event, hold string, req inventory.ReleaseRequest) (inventory.Release, error) {
	var r inventory.Release
	replayed, err := c.do(ctx, call{method: http.MethodDelete, path: eventPath(event) + "/holds/" + seg(hold),
		key: req.IdempotencyKey, actor: c.actorOr(req.Actor)}, &r)
	r.Replayed = replayed
	return r, err
}

// Cancel returns an order's seats to sale (POST .../orders/{order}/cancel).
func (c *Client) Cancel(ctx context.Context, event, order string, req inventory.CancelRequest) (inventory.Order, error) {
	var o inventory.Order
	_, err := c.do(ctx, call{method: http.MethodPost, path: eventPath(event) + "/orders/" + seg(order) + "/cancel",
		actor: c.actorOr(req.Actor), body: struct {
			Reason string `json:"reason,omitempty"`
		}{req.Reason}}, &o)
	return o, err
}

// GetOrder returns an order (GET .../orders/{order}).
func (c *Client) GetOrder(ctx context.Context, event, order string) (inventory.Order, error) {
	var o inventory.Order
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event) + "/orders/" + seg(order)}, &o)
	return o, err
}

// Availability counts seats and places by state (GET .../availability).
func (c *Client) Availability(ctx context.Context, event string) (inventory.Availability, error) {
	var a inventory.Availability
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event) + "/availability"}, &a)
	return a, err
}

// SeatMap returns a section's seats and their states (GET .../seats).
func (c *Client) SeatMap(ctx context.Context, event, section string) (inventory.SeatMap, error) {
	var m inventory.SeatMap
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event) + "/seats",
		query: url.Values{"section": {section}}}, &m)
	return m, err
}

// Audit reads the audit stream after a cursor (GET .../audit). A limit
// above inventory.MaxAuditPage is lowered to it, as stores do.
func (c *Client) Audit(ctx context.Context, event, after string, limit int) (inventory.AuditPage, error) {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(min(limit, inventory.MaxAuditPage)))
	}
	var p inventory.AuditPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: eventPath(event) + "/audit", query: q}, &p)
	return p, err
}

// Reap is not an HTTP endpoint: the sidecar reaps on its own. It returns
// ErrReapNotSupported.
func (c *Client) Reap(ctx context.Context, event string, max int) (int, error) {
	return 0, ErrReapNotSupported
}

// Ping asks the sidecar's /readyz whether its store can serve requests.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/readyz"}, nil)
	return err
}

// Close closes idle connections. The client remains usable.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

var _ inventory.Store = (*Client)(nil)
