package api

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
)

// Operation labels of the outcome metric.
const (
	opHold    = "hold"
	opConfirm = "confirm"
	opRelease = "release"
	opCancel  = "cancel"
	opExtend  = "extend"
)

// writeJSON answers with v encoded as JSON.
func (s *Server) writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("inventory api: encoding a response", "err", err)
		writeError(ctx, apiError{code: CodeInternal, message: "internal error"})
		return
	}
	ctx.SetStatusCode(status)
	setJSONHeaders(ctx)
	ctx.Response.SetBody(append(b, '\n'))
}

// replayed marks a response that repeats a remembered idempotent result.
func replayed(ctx *fasthttp.RequestCtx, yes bool) {
	if yes {
		ctx.Response.Header.Set("Idempotent-Replayed", "true")
	}
}

// outcome counts the result of an operation: "ok" or the error code a
// client saw.
func (s *Server) outcome(op, result string) {
	s.m.operations.WithLabelValues(op, result).Inc()
}

// reject answers malformed input of an operation (op may be "").
func (s *Server) reject(ctx *fasthttp.RequestCtx, op string, e apiError) {
	if op != "" {
		s.outcome(op, e.code)
	}
	writeError(ctx, e)
}

// opFail answers a store error of an operation.
func (s *Server) opFail(ctx *fasthttp.RequestCtx, p params, op string, err error) {
	if op != "" {
		e, _ := storeError(err)
		s.outcome(op, e.code)
	}
	s.fail(ctx, p.route, err)
}

var healthBody = []byte(`{"status":"ok"}` + "\n")

// healthz is liveness: the process answers. It reveals nothing else.
func (s *Server) healthz(ctx *fasthttp.RequestCtx, _ params) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	setJSONHeaders(ctx)
	ctx.Response.SetBody(healthBody)
}

// readiness shares one store probe among concurrent /readyz requests, so
// that a store that hangs costs one goroutine, not one per probe.
type readiness struct {
	mu   sync.Mutex
	wait chan struct{} // closed when the running probe ends; nil if none
	ok   bool          // the last finished probe's result
}

func (r *readiness) probe(store inventory.Store, base context.Context) bool {
	r.mu.Lock()
	if r.wait == nil {
		w := make(chan struct{})
		r.wait = w
		go func() {
			ctx, cancel := context.WithTimeout(base, readyTimeout)
			err := store.Ping(ctx)
			cancel()
			r.mu.Lock()
			r.ok, r.wait = err == nil, nil
			close(w)
			r.mu.Unlock()
		}()
	}
	w := r.wait
	r.mu.Unlock()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case <-w:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.ok
	case <-t.C:
		return false
	}
}

// readyz is readiness: 200 when the store's Ping succeeds within
// readyTimeout.
func (s *Server) readyz(ctx *fasthttp.RequestCtx, _ params) {
	if !s.ready.probe(s.store, s.base) {
		writeError(ctx, apiError{code: CodeUnavailable, message: unavailableMessage})
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	setJSONHeaders(ctx)
	ctx.Response.SetBody(healthBody)
}

// metricsPage is the Prometheus text exposition of the registry.
func (s *Server) metricsPage(ctx *fasthttp.RequestCtx, _ params) {
	mfs, err := s.reg.Gather()
	if err != nil {
		// Gather returns what it could; show that, and log the rest.
		s.log.Warn("inventory api: gathering metrics", "err", err)
	}
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentType(string(format))
	ctx.Response.Header.Set("Cache-Control", "no-store")
	enc := expfmt.NewEncoder(ctx, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			s.log.Error("inventory api: encoding metrics", "err", err)
			writeError(ctx, apiError{code: CodeInternal, message: "internal error"})
			return
		}
	}
}

func (s *Server) listEvents(ctx *fasthttp.RequestCtx, p params) {
	ids, err := s.store.Events(s.base)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	if ids == nil {
		ids = []string{}
	}
	s.writeJSON(ctx, fasthttp.StatusOK, struct {
		Events []string `json:"events"`
	}{ids})
}

func (s *Server) getEvent(ctx *fasthttp.RequestCtx, p params) {
	ev, err := s.store.Event(s.base, p.event)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, ev)
}

func (s *Server) putEvent(ctx *fasthttp.RequestCtx, p params) {
	_, actor, e, ok := callHeaders(ctx, false)
	if !ok {
		s.reject(ctx, "", e)
		return
	}
	var def eventBody
	if err := decodeEvent(ctx.PostBody(), &def); err != nil {
		s.reject(ctx, "", s.invalidRequest(err))
		return
	}
	if err := checkEventBody(&def); err != nil {
		s.reject(ctx, "", s.invalidRequest(err))
		return
	}
	ev, err := s.store.PutEvent(s.base, p.event, def, actor)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, ev)
}

func (s *Server) availability(ctx *fasthttp.RequestCtx, p params) {
	a, err := s.store.Availability(s.base, p.event)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, a)
}

func (s *Server) seatMap(ctx *fasthttp.RequestCtx, p params) {
	section := string(ctx.QueryArgs().Peek("section"))
	if !validSection(section) {
		s.reject(ctx, "", invalid("query: section is required: 1-32 characters from [A-Za-z0-9_.], starting with a letter or digit"))
		return
	}
	m, err := s.store.SeatMap(s.base, p.event, section)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, m)
}

// validSection is the shape of a section id (inventory's rule for ids of
// sections, rows and pools).
func validSection(id string) bool {
	if len(id) == 0 || len(id) > inventory.MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '.') {
			return false
		}
	}
	return true
}

func (s *Server) hold(ctx *fasthttp.RequestCtx, p params) {
	key, actor, e, ok := callHeaders(ctx, true)
	if !ok {
		s.reject(ctx, opHold, e)
		return
	}
	var b holdBody
	if err := decodeHold(ctx.PostBody(), &b); err != nil {
		s.reject(ctx, opHold, s.invalidRequest(err))
		return
	}
	req, err := b.request()
	if err != nil {
		s.reject(ctx, opHold, s.invalidRequest(err))
		return
	}
	req.IdempotencyKey, req.Actor = key, actor
	h, err := s.store.Hold(s.base, p.event, req)
	if err != nil {
		s.opFail(ctx, p, opHold, err)
		return
	}
	s.outcome(opHold, "ok")
	replayed(ctx, h.Replayed)
	writeHold(ctx, fasthttp.StatusCreated, &h)
}

func (s *Server) getHold(ctx *fasthttp.RequestCtx, p params) {
	h, err := s.store.GetHold(s.base, p.event, p.id)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	writeHold(ctx, fasthttp.StatusOK, &h)
}

func (s *Server) confirm(ctx *fasthttp.RequestCtx, p params) {
	key, actor, e, ok := callHeaders(ctx, true)
	if !ok {
		s.reject(ctx, opConfirm, e)
		return
	}
	var payRef string
	if err := decodeText(ctx.PostBody(), "payment_ref", &payRef); err != nil {
		s.reject(ctx, opConfirm, s.invalidRequest(err))
		return
	}
	o, err := s.store.Confirm(s.base, p.event, p.id, inventory.ConfirmRequest{PaymentRef: payRef, IdempotencyKey: key, Actor: actor})
	if err != nil {
		s.opFail(ctx, p, opConfirm, err)
		return
	}
	s.outcome(opConfirm, "ok")
	replayed(ctx, o.Replayed)
	writeOrder(ctx, fasthttp.StatusOK, &o)
}

func (s *Server) release(ctx *fasthttp.RequestCtx, p params) {
	key, actor, e, ok := callHeaders(ctx, true)
	if !ok {
		s.reject(ctx, opRelease, e)
		return
	}
	r, err := s.store.Release(s.base, p.event, p.id, inventory.ReleaseRequest{IdempotencyKey: key, Actor: actor})
	if err != nil {
		s.opFail(ctx, p, opRelease, err)
		return
	}
	s.outcome(opRelease, "ok")
	replayed(ctx, r.Replayed)
	s.writeJSON(ctx, fasthttp.StatusOK, r)
}

func (s *Server) extend(ctx *fasthttp.RequestCtx, p params) {
	key, actor, e, ok := callHeaders(ctx, true)
	if !ok {
		s.reject(ctx, opExtend, e)
		return
	}
	req, err := decodeExtend(ctx.PostBody())
	if err != nil {
		s.reject(ctx, opExtend, s.invalidRequest(err))
		return
	}
	req.IdempotencyKey, req.Actor = key, actor
	h, err := s.store.Extend(s.base, p.event, p.id, req)
	if err != nil {
		s.opFail(ctx, p, opExtend, err)
		return
	}
	s.outcome(opExtend, "ok")
	replayed(ctx, h.Replayed)
	writeHold(ctx, fasthttp.StatusOK, &h)
}

func (s *Server) getOrder(ctx *fasthttp.RequestCtx, p params) {
	o, err := s.store.GetOrder(s.base, p.event, p.id)
	if err != nil {
		s.fail(ctx, p.route, err)
		return
	}
	writeOrder(ctx, fasthttp.StatusOK, &o)
}

func (s *Server) cancel(ctx *fasthttp.RequestCtx, p params) {
	_, actor, e, ok := callHeaders(ctx, false)
	if !ok {
		s.reject(ctx, opCancel, e)
		return
	}
	var reason string
	if err := decodeText(ctx.PostBody(), "reason", &reason); err != nil {
		s.reject(ctx, opCancel, s.invalidRequest(err))
		return
	}
	o, err := s.store.Cancel(s.base, p.event, p.id, inventory.CancelRequest{Reason: reason, Actor: actor})
	if err != nil {
		s.opFail(ctx, p, opCancel, err)
		return
	}
	s.outcome(opCancel, "ok")
	writeOrder(ctx, fasthttp.StatusOK, &o)
}

// maxCursorLen bounds an audit cursor; stores' cursors are short.
const maxCursorLen = 128

func (s *Server) audit(ctx *fasthttp.RequestCtx, p params) {
	after, limit, err := auditQuery(ctx.QueryArgs())
	if err != "" {
		s.reject(ctx, "", invalid(err))
		return
	}
	page, serr := s.store.Audit(s.base, p.event, after, limit)
	if serr != nil {
		s.fail(ctx, p.route, serr)
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, page)
}

// auditQuery parses ?after=CURSOR&limit=N. An absent or empty after is the
// start; an absent limit is the store's default. problem is "" when the
// query is good.
func auditQuery(args *fasthttp.Args) (after string, limit int, problem string) {
	if a := args.Peek("after"); len(a) > 0 {
		if len(a) > maxCursorLen {
			return "", 0, "query: after is not a cursor of this event's audit stream"
		}
		for _, c := range a {
			if c < 0x21 || c > 0x7e {
				return "", 0, "query: after is not a cursor of this event's audit stream"
			}
		}
		after = string(a)
	}
	if args.Has("limit") {
		l := args.Peek("limit")
		n := 0
		if len(l) == 0 || len(l) > 4 {
			return "", 0, "query: limit must be an integer between 1 and " + strconv.Itoa(inventory.MaxAuditPage)
		}
		for _, c := range l {
			if c < '0' || c > '9' {
				return "", 0, "query: limit must be an integer between 1 and " + strconv.Itoa(inventory.MaxAuditPage)
			}
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > inventory.MaxAuditPage {
			return "", 0, "query: limit must be an integer between 1 and " + strconv.Itoa(inventory.MaxAuditPage)
		}
		limit = n
	}
	return after, limit, ""
}
