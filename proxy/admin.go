package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/jsonstrict"
)

// AdminOptions configure the operator API.
type AdminOptions struct {
	// Token is the bearer token of every request but /healthz and
	// /readyz; required.
	Token string
	// Gatherer is what /metrics shows.
	Gatherer prometheus.Gatherer
	// Ready reports whether this replica can serve (stores reachable, an
	// origin healthy); nil: always ready.
	Ready func(ctx context.Context) error
	// Reload re-reads the configuration (POST /admin/v1/reload): the
	// report to answer with, the problems that refused the file (422),
	// or an error when there is nothing to reload (409). nil: no
	// endpoint.
	Reload func(ctx context.Context) (report any, problems []string, err error)
	// Origin tells where an event's configuration comes from, as GET
	// shows it: "file" (the configuration file) or "api" (a record made
	// through the operator API); nil: every event is the file's.
	Origin func(id string) string
	// Events makes, changes and removes events (POST /admin/v1/events,
	// PATCH and DELETE /admin/v1/events/{id}); nil: no such endpoints.
	Events EventsAdmin
}

// maxAdminBody bounds an operator request's body.
const maxAdminBody = 64 << 10

// Admin returns the operator API, for a separate, private listener:
//
//	GET    /admin/v1/openapi.json             the OpenAPI 3.1 description of this API
//	GET    /admin/v1/events                   every event with live figures
//	GET    /admin/v1/events/{id}              one event
//	POST   /admin/v1/events                   make an event: {"event":{...},"routes":[...]} (201)
//	PATCH  /admin/v1/events/{id}              change an event: a JSON merge patch of its record
//	DELETE /admin/v1/events/{id}              remove an event made through the API
//	GET    /admin/v1/events/{id}/controller   the controller's recent decisions with their reasons
//	                                          (?since=RFC 3339&limit=1..600, default 120)
//	GET    /admin/v1/events/{id}/report       the record after the sale (?format=json|csv|html, default json)
//	POST   /admin/v1/events/{id}/pause        stop admitting (joins go on)
//	POST   /admin/v1/events/{id}/resume
//	POST   /admin/v1/events/{id}/close        close the queue for good
//	POST   /admin/v1/events/{id}/reopen
//	POST   /admin/v1/events/{id}/sold-out     tell the queue nothing is left
//	POST   /admin/v1/events/{id}/on-sale      undo sold-out
//	POST   /admin/v1/events/{id}/maintenance  the maintenance page (503) for gated paths; admission stops
//	POST   /admin/v1/events/{id}/end-maintenance
//	POST   /admin/v1/events/{id}/passthrough  everyone straight through; those queued are let in
//	POST   /admin/v1/events/{id}/end-passthrough
//	PUT    /admin/v1/events/{id}/mode         {"mode":"always"|"threshold"|"scheduled"}
//	DELETE /admin/v1/events/{id}/mode         back to the configured mode
//	PUT    /admin/v1/events/{id}/caps         {"max_active":N,"max_new_per_minute":M}
//	DELETE /admin/v1/events/{id}/caps         back to the configured caps
//	POST   /admin/v1/events/{id}/revoke       {"pass_id":"..."} or {"visitor_id":"..."}:
//	                                          bar a visitor (and that pass); 404 if unknown
//	PUT    /admin/v1/events/{id}/notice       {"text":"...","texts":{"de":"..."}}: a message on
//	                                          the waiting-room page and in the status JSON
//	DELETE /admin/v1/events/{id}/notice
//	POST   /admin/v1/reload                   re-read the configuration file and apply it live
//	                                          (422 with every problem when it is refused)
//	GET    /admin/                            the operator console (package console): a login form
//	                                          for the token, then the live dashboard
//	GET    /metrics                           Prometheus
//	GET    /healthz                           the process is up
//	GET    /readyz                            it can serve
//
// Every change is applied through the admission store, so every replica
// follows within a tick, and logged; its answer is the event as it is
// after the change.
func (p *Proxy) Admin(opts AdminOptions) (http.Handler, error) {
	if len(opts.Token) < 16 {
		return nil, errors.New("proxy: the admin API needs a token of at least 16 characters")
	}
	a := &admin{p: p, token: sha256.Sum256([]byte(opts.Token)), ready: opts.Ready, origin: opts.Origin}
	if a.origin == nil {
		a.origin = func(string) string { return "file" }
	}
	mux := &routeMux{ServeMux: http.NewServeMux()}
	mux.Handle("GET /admin/v1/openapi.json", a.auth(http.HandlerFunc(serveOpenAPI)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	g := opts.Gatherer
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux.Handle("GET /metrics", a.auth(promhttp.HandlerFor(g, promhttp.HandlerOpts{})))
	mux.Handle("GET /admin/v1/events", a.auth(http.HandlerFunc(a.list)))
	mux.Handle("GET /admin/v1/events/{id}", a.auth(http.HandlerFunc(a.get)))
	mux.Handle("GET /admin/v1/events/{id}/controller", a.auth(http.HandlerFunc(a.controller)))
	mux.Handle("GET /admin/v1/events/{id}/report", a.auth(http.HandlerFunc(a.report))) // report.go
	for _, c := range []struct {
		verb string
		fn   func(c *admission.Control)
	}{
		{"pause", func(c *admission.Control) { c.Paused = true }},
		{"resume", func(c *admission.Control) { c.Paused = false }},
		{"close", func(c *admission.Control) { c.Closed = true }},
		{"reopen", func(c *admission.Control) { c.Closed = false }},
		{"sold-out", func(c *admission.Control) { c.SoldOut = true }},
		{"on-sale", func(c *admission.Control) { c.SoldOut = false }},
		// Maintenance and passthrough exclude each other: the last one
		// asked for is the one in force.
		{"maintenance", func(c *admission.Control) { c.Maintenance, c.Passthrough = true, false }},
		{"end-maintenance", func(c *admission.Control) { c.Maintenance = false }},
		{"passthrough", func(c *admission.Control) { c.Passthrough, c.Maintenance = true, false }},
		{"end-passthrough", func(c *admission.Control) { c.Passthrough = false }},
	} {
		mux.Handle("POST /admin/v1/events/{id}/"+c.verb, a.auth(a.control(c.verb, c.fn)))
	}
	mux.Handle("PUT /admin/v1/events/{id}/caps", a.auth(http.HandlerFunc(a.setCaps)))
	mux.Handle("DELETE /admin/v1/events/{id}/caps", a.auth(a.control("caps-reset",
		func(c *admission.Control) { c.Caps = nil })))
	mux.Handle("POST /admin/v1/events/{id}/revoke", a.auth(http.HandlerFunc(a.revoke)))
	mux.Handle("PUT /admin/v1/events/{id}/notice", a.auth(http.HandlerFunc(a.setNotice)))
	mux.Handle("DELETE /admin/v1/events/{id}/notice", a.auth(a.control("notice-clear",
		func(c *admission.Control) { c.Notice = nil })))
	mux.Handle("PUT /admin/v1/events/{id}/mode", a.auth(http.HandlerFunc(a.setMode)))
	mux.Handle("DELETE /admin/v1/events/{id}/mode", a.auth(a.control("mode-reset",
		func(c *admission.Control) { c.Mode = "" })))
	if opts.Events != nil {
		a.mountEvents(mux, opts.Events) // adminevents.go
	}
	if opts.Reload != nil {
		mux.Handle("POST /admin/v1/reload", a.auth(reloadHandler(opts.Reload, a.p.log)))
	}
	// The console's pages are not the JSON API: they stay out of the
	// patterns the OpenAPI document is held to.
	if err := p.mountConsole(mux.ServeMux, opts, g); err != nil {
		return nil, err
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		adminError(w, http.StatusNotFound, "not_found", "there is nothing at this path")
	})
	return mux, nil
}

type admin struct {
	p      *Proxy
	origin func(id string) string
	token  [sha256.Size]byte
	ready  func(ctx context.Context) error
}

func (a *admin) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(tok))
		if !ok || subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="waitroom admin"`)
			adminError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *admin) readyz(w http.ResponseWriter, r *http.Request) {
	if a.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.ready(ctx); err != nil {
			a.p.log.Warn("proxy: not ready", "err", err)
			adminError(w, http.StatusServiceUnavailable, "not_ready", "this replica cannot serve yet")
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ready\n"))
}

// eventView is an event as the operator API shows it.
type eventView struct {
	ID string `json:"id"`
	// ConfigOrigin is where the event's configuration comes from: "file"
	// or "api" ("origin" is the origin server's figures).
	ConfigOrigin string          `json:"config_origin"`
	State        admission.State `json:"state"`
	// Mode is the mode in force, ConfiguredMode the configuration's.
	Mode           admission.Mode `json:"mode"`
	ConfiguredMode admission.Mode `json:"configured_mode"`
	// Queueing is false while visitors without a pass go straight
	// through; Slots is the last pass-through grant, PassedThrough the
	// visitors let straight through on this replica.
	Queueing      bool                `json:"queueing"`
	Slots         int                 `json:"passthrough_slots"`
	PassedThrough int64               `json:"passed_through"`
	Leader        bool                `json:"leader"`
	QueueOpensAt  time.Time           `json:"queue_opens_at"`
	OnSaleAt      time.Time           `json:"on_sale_at"`
	ClosesAt      *time.Time          `json:"closes_at,omitempty"`
	Control       controlView         `json:"control"`
	Caps          capsView            `json:"caps"`
	Notice        *noticeView         `json:"notice"`
	Limit         int                 `json:"limit"`
	Admitted1m    int                 `json:"admitted_last_minute"`
	NoShowRate    float64             `json:"no_show_rate"`
	Pending       int                 `json:"pending"`
	Unarrived     int                 `json:"unarrived"`
	Replicas      int                 `json:"replicas"`
	Minted        uint64              `json:"passes_minted"`
	Redeemed      uint64              `json:"passes_redeemed"`
	Origin        originView          `json:"origin"`
	Lanes         map[string]laneView `json:"lanes"`
}

// capsView are the caps in force: the operator's, else the configured
// ones. EffectiveAt is when they bind: the controller's next tick, which
// reads them (set only in the answer to a change of the caps).
type capsView struct {
	MaxActive       int        `json:"max_active"`
	MaxNewPerMinute int        `json:"max_new_per_minute"`
	EffectiveAt     *time.Time `json:"effective_at,omitempty"`
}

// controlView is an admission.Control as the operator API shows it:
// snake_case throughout (admission.Caps has no JSON names of its own; the
// stores keep it as they always have).
type controlView struct {
	Paused      bool           `json:"paused,omitempty"`
	Closed      bool           `json:"closed,omitempty"`
	SoldOut     bool           `json:"sold_out,omitempty"`
	Maintenance bool           `json:"maintenance,omitempty"`
	Passthrough bool           `json:"passthrough,omitempty"`
	Mode        admission.Mode `json:"mode,omitempty"`
	// Caps are the operator's caps (absent: the configured ones).
	Caps *capsView `json:"caps,omitempty"`
}

// noticeView is an event's notice to visitors.
type noticeView struct {
	Text  string            `json:"text"`
	Texts map[string]string `json:"texts,omitempty"`
}

func viewControl(c admission.Control) controlView {
	v := controlView{Paused: c.Paused, Closed: c.Closed, SoldOut: c.SoldOut, Maintenance: c.Maintenance,
		Passthrough: c.Passthrough, Mode: c.Mode}
	if c.Caps != nil {
		v.Caps = &capsView{MaxActive: c.Caps.MaxActive, MaxNewPerMinute: c.Caps.MaxNewPerMinute}
	}
	return v
}

type originView struct {
	RequestRate float64 `json:"request_rate"`
	LatencyP50  float64 `json:"latency_p50_ms"`
	LatencyP95  float64 `json:"latency_p95_ms"`
	ErrorRate   float64 `json:"error_rate"`
	InFlight    int     `json:"in_flight"`
	Active      int     `json:"active_visitors"`
	Completions int     `json:"completions"`
}

type laneView struct {
	Serving  uint64  `json:"serving"`
	Drawn    uint64  `json:"drawn"`
	Waiting  uint64  `json:"waiting"`
	Undrawn  int     `json:"undrawn"`
	RateLow  float64 `json:"rate_low"`
	RateMid  float64 `json:"rate_mid"`
	RateHigh float64 `json:"rate_high"`
}

func (a *admin) view(id string) (eventView, error) {
	cfg, err := a.p.engine.Config(id)
	if err != nil {
		return eventView{}, err
	}
	c, err := a.p.engine.Control(id)
	if err != nil {
		return eventView{}, err
	}
	f := a.p.engine.Figures(id)
	caps := cfg.Caps
	if c.Caps != nil {
		caps = *c.Caps
	}
	// State, mode and queueing as they are now (after a change made
	// here), the rest as of the last tick.
	e := a.p.engine
	v := eventView{ID: id, ConfigOrigin: a.origin(id), State: e.State(id), Mode: e.Mode(id), ConfiguredMode: cfg.Mode, Queueing: e.Queueing(id),
		Slots: f.Slots, PassedThrough: f.PassedThrough, Leader: f.Leader, QueueOpensAt: cfg.QueueOpensAt.UTC(),
		OnSaleAt: cfg.OnSaleAt.UTC(), Control: viewControl(c),
		Caps: capsView{MaxActive: caps.MaxActive, MaxNewPerMinute: caps.MaxNewPerMinute}, Limit: f.Limit,
		Admitted1m: f.Admitted1m, NoShowRate: f.NoShowRate, Pending: f.Pending,
		Unarrived: f.Unarrived, Replicas: f.Replicas, Minted: f.Minted, Redeemed: f.Redeemed,
		Origin: originView{RequestRate: f.Last.RequestRate, LatencyP50: ms(f.Last.LatencyP50),
			LatencyP95: ms(f.Last.LatencyP95), ErrorRate: f.Last.ErrorRate, InFlight: f.Last.InFlight,
			Active: f.Last.Active, Completions: f.Last.Completions},
		Lanes: make(map[string]laneView, len(f.Lanes))}
	if c.Notice != nil {
		v.Notice = &noticeView{Text: c.Notice.Text, Texts: c.Notice.Texts}
	}
	if !cfg.ClosesAt.IsZero() {
		t := cfg.ClosesAt.UTC()
		v.ClosesAt = &t
	}
	for name, l := range f.Lanes {
		v.Lanes[name] = laneView(l)
	}
	return v, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (a *admin) list(w http.ResponseWriter, _ *http.Request) {
	out := struct {
		Events []eventView `json:"events"`
	}{Events: []eventView{}}
	for _, id := range a.p.engine.Events() {
		v, err := a.view(id)
		if err != nil {
			continue
		}
		out.Events = append(out.Events, v)
	}
	adminJSON(w, http.StatusOK, out)
}

func (a *admin) get(w http.ResponseWriter, r *http.Request) {
	v, err := a.view(r.PathValue("id"))
	if err != nil {
		adminError(w, http.StatusNotFound, "unknown_event", "there is no such event")
		return
	}
	adminJSON(w, http.StatusOK, v)
}

// control applies one operator change to an event's control.
func (a *admin) control(verb string, fn func(c *admission.Control)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.update(w, r, verb, fn)
	})
}

// update applies one operator change and answers with the event as it
// is after it; a change of the caps says when they bind
// (caps.effective_at: the controller's next tick).
func (a *admin) update(w http.ResponseWriter, r *http.Request, verb string, fn func(c *admission.Control), attrs ...any) {
	id := r.PathValue("id")
	if _, err := a.p.engine.UpdateControl(r.Context(), id, fn); err != nil {
		a.failed(w, id, err)
		return
	}
	a.p.log.Info("proxy: operator change", append([]any{"event", id, "change", verb, "from", r.RemoteAddr}, attrs...)...)
	v, err := a.view(id)
	if err != nil {
		a.failed(w, id, err)
		return
	}
	if verb == "caps" || verb == "caps-reset" {
		at, err := a.p.engine.NextTick(id)
		if err != nil {
			a.failed(w, id, err)
			return
		}
		at = at.UTC()
		v.Caps.EffectiveAt = &at
	}
	adminJSON(w, http.StatusOK, v)
}

func (a *admin) failed(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, admission.ErrUnknownEvent) {
		adminError(w, http.StatusNotFound, "unknown_event", "there is no such event")
		return
	}
	a.p.log.Error("proxy: operator change failed", "event", id, "err", err)
	adminError(w, http.StatusServiceUnavailable, "unavailable", "the admission store did not take the change; retry")
}

func (a *admin) setCaps(w http.ResponseWriter, r *http.Request) {
	var body struct{ MaxActive, MaxNewPerMinute *int }
	if !decodeAdmin(w, r, func(d *jsonstrict.Reader, name []byte) error {
		var dst **int
		switch string(name) {
		case "max_active":
			dst = &body.MaxActive
		case "max_new_per_minute":
			dst = &body.MaxNewPerMinute
		default:
			return jsonstrict.UnknownField("", name)
		}
		if d.Null() {
			return nil
		}
		n, err := d.Int(string(name), math.MinInt, math.MaxInt)
		v := int(n)
		*dst = &v
		return err
	}) {
		return
	}
	if body.MaxActive == nil || body.MaxNewPerMinute == nil || *body.MaxActive < 0 || *body.MaxNewPerMinute < 0 {
		adminError(w, http.StatusBadRequest, "bad_request", "max_active and max_new_per_minute are required, each >= 0 (0: no cap)")
		return
	}
	caps := admission.Caps{MaxActive: *body.MaxActive, MaxNewPerMinute: *body.MaxNewPerMinute}
	a.update(w, r, "caps", func(c *admission.Control) { c.Caps = &caps },
		"max_active", caps.MaxActive, "max_new_per_minute", caps.MaxNewPerMinute)
}

func (a *admin) setMode(w http.ResponseWriter, r *http.Request) {
	var mode admission.Mode
	if !decodeAdmin(w, r, func(d *jsonstrict.Reader, name []byte) error {
		if string(name) != "mode" {
			return jsonstrict.UnknownField("", name)
		}
		v, err := d.String("mode")
		mode = admission.Mode(v)
		return err
	}) {
		return
	}
	if !mode.Valid() {
		adminError(w, http.StatusBadRequest, "bad_request", "mode must be always, threshold or scheduled")
		return
	}
	cfg, err := a.p.engine.Config(r.PathValue("id"))
	if err != nil {
		a.failed(w, r.PathValue("id"), err)
		return
	}
	if mode == admission.ModeScheduled && cfg.OpenFromStart() {
		adminError(w, http.StatusConflict, "no_on_sale", "this event has no on_sale_at to schedule a draw at")
		return
	}
	a.update(w, r, "mode", func(c *admission.Control) { c.Mode = mode }, "mode", mode)
}

func (a *admin) revoke(w http.ResponseWriter, r *http.Request) {
	var body struct{ PassID, VisitorID string }
	if !decodeAdmin(w, r, func(d *jsonstrict.Reader, name []byte) (err error) {
		switch {
		case string(name) != "pass_id" && string(name) != "visitor_id":
			return jsonstrict.UnknownField("", name)
		case d.Null():
			return nil
		case string(name) == "pass_id":
			body.PassID, err = d.String("pass_id")
		default:
			body.VisitorID, err = d.String("visitor_id")
		}
		return err
	}) {
		return
	}
	if (body.PassID == "") == (body.VisitorID == "") || len(body.PassID) > 64 {
		adminError(w, http.StatusBadRequest, "bad_request",
			"give either pass_id (at most 64 characters) or visitor_id (32 hex digits)")
		return
	}
	id := r.PathValue("id")
	cfg, err := a.p.engine.Config(id)
	if err != nil {
		a.failed(w, id, err)
		return
	}
	// Which visitor: named, or the holder the pass id names.
	unknown, what := "unknown_visitor", "no visitor with this id joined this event"
	var v admission.VisitorID
	if body.VisitorID != "" {
		if v, err = admission.ParseVisitorID(body.VisitorID); err != nil || v.String() != body.VisitorID {
			adminError(w, http.StatusBadRequest, "bad_request", "visitor_id must be 32 lower-case hex digits")
			return
		}
	} else {
		unknown, what = "unknown_pass", "this event issued no pass with this id"
		var ok bool
		if v, ok = admission.PassVisitor(body.PassID); !ok {
			adminError(w, http.StatusNotFound, unknown, what)
			return
		}
	}
	known, err := a.p.engine.Known(r.Context(), id, v)
	if err != nil {
		a.failed(w, id, err)
		return
	}
	if !known {
		adminError(w, http.StatusNotFound, unknown, what)
		return
	}
	out := map[string]any{"event": id, "visitor_id": v.String()}
	if body.PassID != "" {
		// A pass never outlives its session: barring it that long is enough.
		until := a.p.clock().Add(cfg.SessionDuration + cfg.NoShowGrace).UTC().Truncate(time.Second)
		if err := a.p.engine.Revoke(r.Context(), id, body.PassID, until); err != nil {
			a.failed(w, id, err)
			return
		}
		out["pass_id"], out["revoked_until"] = body.PassID, until
	}
	// The holder too, or their next status poll would mint a new pass.
	bar, err := a.p.engine.RevokeVisitor(r.Context(), id, v)
	if err != nil {
		a.failed(w, id, err)
		return
	}
	out["visitor_revoked_until"] = bar.Until.UTC().Truncate(time.Second)
	if body.PassID == "" {
		out["revoked_until"] = out["visitor_revoked_until"]
	}
	a.p.log.Info("proxy: visitor revoked", "event", id, "visitor", v.String(), "pass", body.PassID, "from", r.RemoteAddr)
	adminJSON(w, http.StatusOK, out)
}

// decodeAdmin reads a small JSON body with the strict decoder, field
// reading each of its fields; it answers 400 itself.
func decodeAdmin(w http.ResponseWriter, r *http.Request, field func(d *jsonstrict.Reader, name []byte) error) bool {
	body, ok := readAdminBody(w, r)
	if !ok {
		return false
	}
	if jsonstrict.Decode(body, field) != nil {
		adminError(w, http.StatusBadRequest, "bad_request", "the body must be one JSON object of the documented fields")
		return false
	}
	return true
}

// readAdminBody reads a JSON request body of at most maxAdminBody bytes;
// it answers 415 or 400 itself.
func readAdminBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		adminError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdminBody))
	if err != nil {
		adminError(w, http.StatusBadRequest, "bad_request", "the body could not be read (at most 64 KiB)")
		return nil, false
	}
	return body, true
}

func adminJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("proxy: encoding an admin response failed", "err", err)
		adminError(w, http.StatusInternalServerError, "internal", "something went wrong on our side")
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", ReferrerPolicy)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func adminError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", ReferrerPolicy)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(errorBody(code, message), '\n'))
}
