package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/internal/jsonstrict"
)

// Defence is the bot defence shared by the events whose challenge is on.
type Defence struct {
	// PoW issues and verifies proof-of-work challenges.
	PoW *challenge.PoW
	// Scorer turns a request's signals into a risk score.
	Scorer *challenge.Scorer
	// TTL is how long a challenge may be solved and redeemed; 0 means
	// DefaultChallengeTTL.
	TTL time.Duration
	// JA4Header is the header a trusted front proxy puts the client's JA4
	// in; "" for none.
	JA4Header string
	// Fingerprints holds the JA4 of connections whose TLS waitroom
	// terminates; nil when it terminates none.
	Fingerprints *Fingerprints
	// ScoreTimeout bounds one scoring (the external scorer's time
	// included); 0 means DefaultScoreTimeout.
	ScoreTimeout time.Duration
	// SuspectMemory is how long an address's highest score is carried
	// over to its later requests (see suspects); 0 means
	// DefaultSuspectMemory.
	SuspectMemory time.Duration
}

// Defaults of Defence.
const (
	// DefaultScoreTimeout bounds one scoring.
	DefaultScoreTimeout = 250 * time.Millisecond
	// DefaultChallengeTTL is how long a challenge lasts unless told: the
	// heavy work takes a browser a minute or two.
	DefaultChallengeTTL = 5 * time.Minute
)

// EventChallenge is one event's bot defence at join.
type EventChallenge struct {
	// Policy maps a score to an action (and says whether to only log it).
	Policy challenge.Policy
	// Light and Heavy size the proofs of work.
	Light, Heavy Work
	// Captcha verifies the captcha band's tokens; nil: that band gets the
	// heavy proof of work.
	Captcha challenge.Provider
	// NoJSCaptcha lets visitors join with the CAPTCHA alone, in place of
	// the proof of work (the page offers it while the work runs).
	NoJSCaptcha bool
}

// Work is a proof of work's size.
type Work struct{ Bits, Puzzles uint8 }

// The errors of the bot defence.
var (
	errBlocked          = newAPIError("blocked", "this request looks automated and was refused")
	errChallengeNeeded  = newAPIError("challenge_required", "solve the challenge first: GET the challenge, then join with its solution")
	errChallengeInvalid = newAPIError("challenge_invalid", "the challenge solution is not valid; fetch a new challenge")
	errChallengeExpired = newAPIError("challenge_expired", "the challenge expired; fetch a new one")
	errChallengeUsed    = newAPIError("challenge_used", "this challenge has already been used; fetch a new one")
	errCaptchaNeeded    = newAPIError("captcha_required", "solve the CAPTCHA to join")
	errCaptchaFailed    = newAPIError("captcha_failed", "the CAPTCHA was not solved; try again")
)

// defenceMetrics count the bot defence's decisions.
type defenceMetrics struct {
	decisions *prometheus.CounterVec // event, action, applied
	refusals  *prometheus.CounterVec // event, reason
	reasons   *prometheus.CounterVec // reason
	signalErr prometheus.Counter
}

func newDefenceMetrics(reg prometheus.Registerer) (*defenceMetrics, error) {
	m := &defenceMetrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_challenge_decisions_total",
			Help: "Risk decisions by event, the action the score called for, and the action applied (they differ in dry_run)."},
			[]string{"event", "action", "applied"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_challenge_refusals_total",
			Help: "Joins refused by the bot defence, by reason (blocked, no_challenge, invalid, binding, short, expired, replayed, captcha_failed, captcha_unavailable)."},
			[]string{"event", "reason"}),
		reasons: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_risk_reasons_total",
			Help: "Risk findings by signal reason, counted at every scoring."}, []string{"reason"}),
		signalErr: prometheus.NewCounter(prometheus.CounterOpts{Name: "waitroom_risk_signal_errors_total",
			Help: "Signals that could not judge a request (an external scorer timing out)."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.decisions, m.refusals, m.reasons, m.signalErr} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Fingerprints remembers the JA4 fingerprint of each TLS connection from
// its ClientHello until the connection closes. Safe for concurrent use.
type Fingerprints struct{ m sync.Map }

// Observe records hello's fingerprint; call it from
// tls.Config.GetConfigForClient.
func (f *Fingerprints) Observe(hello *tls.ClientHelloInfo) {
	if hello.Conn != nil {
		f.m.Store(hello.Conn, challenge.JA4(hello))
	}
}

// Forget drops c's fingerprint; call it when c closes.
func (f *Fingerprints) Forget(c net.Conn) { f.m.Delete(rawConn(c)) }

func (f *Fingerprints) lookup(c net.Conn) string {
	if v, ok := f.m.Load(rawConn(c)); ok {
		return v.(string)
	}
	return ""
}

func rawConn(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}

// challengeBinding is what a challenge is bound to: everything it was
// scored on that a client decides for itself — the User-Agent, the
// header fingerprint (challenge.HeaderFingerprint), its TLS stack (the
// part of its JA4 that a resumed session does not change,
// challenge.TLSStack) and its exact address (an IPv6 address's /64, where privacy addresses
// rotate) — so that a challenge fetched by one client (a real browser)
// cannot be redeemed by another (a script), and one scored with innocent
// headers cannot be joined with others.
func challengeBinding(r *challenge.Request) [16]byte {
	var buf [512]byte // on the stack unless the User-Agent is long
	b := append(buf[:0], "waitroom/challenge-binding/v2\x00"...)
	ua, _ := r.Get("User-Agent")
	b = append(b, ua...)
	b = append(b, 0)
	b = challenge.AppendHeaderFingerprint(b, r.Headers)
	b = append(b, 0)
	b = challenge.AppendTLSStack(b, r.JA4)
	b = append(b, 0)
	if r.IP.IsValid() {
		a := clientAddr(r.IP).As16()
		b = append(b, a[:]...)
	}
	sum := sha256.Sum256(b)
	return [16]byte(sum[:16])
}

// clientJA4 is the JA4 of the client's TLS: from the ClientHello when
// waitroom terminated it, else from a trusted front proxy's header; ""
// when unknown or without a bot defence.
func (p *Proxy) clientJA4(ctx *fasthttp.RequestCtx) string {
	d := p.opts.Defence
	if d == nil {
		return ""
	}
	if d.Fingerprints != nil {
		if j := d.Fingerprints.lookup(ctx.Conn()); j != "" {
			return j
		}
	}
	if d.JA4Header != "" && p.trusted.Trusts(ctx) {
		return string(ctx.Request.Header.Peek(d.JA4Header))
	}
	return ""
}

// binder is the device binding of the request from ip.
func (p *Proxy) binder(ctx *fasthttp.RequestCtx, ip netip.Addr) binder {
	b := p.opts.Binding.binder(ctx.Request.Header.UserAgent(), ip)
	if p.opts.Binding.TLSStack {
		challenge.AppendTLSStack(b.stack[:0], p.clientJA4(ctx))
	}
	return b
}

// riskRequest copies what scoring needs out of ctx.
func (p *Proxy) riskRequest(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, now time.Time) *challenge.Request {
	r := &challenge.Request{Event: ev.ID, IP: ip, Now: now, Headers: wireHeaders(ctx.Request.Header.RawHeaders()),
		JA4: p.clientJA4(ctx)}
	if tok := cookie(&ctx.Request.Header, ev.ticketCookie); len(tok) > 0 {
		if e := p.tickets.get(tok); e != nil {
			r.Visitor = e.v.Visitor.String()
		}
	}
	return r
}

// wireHeaders splits raw request headers into name/value pairs in wire
// order. Malformed lines (fasthttp refused those already) are skipped.
// The names and values are substrings of one copy of raw: two
// allocations, however many headers.
func wireHeaders(raw []byte) []challenge.Header {
	hs := make([]challenge.Header, 0, 16)
	text := string(raw)
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimRight(line, "\r\n")
		name, value, ok := strings.Cut(line, ":")
		if !ok || len(name) == 0 {
			continue
		}
		hs = append(hs, challenge.Header{Name: name, Value: strings.TrimSpace(value)})
	}
	return hs
}

// decide scores the request and picks the event's action; it returns
// the request it scored, to bind a challenge to.
func (p *Proxy) decide(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, now time.Time) (challenge.Decision, int, *challenge.Request) {
	r := p.riskRequest(ctx, ev, ip, now)
	dec, score := p.assess(ev, r, true)
	return dec, score, r
}

// assess scores r, raises the score towards what its client scored
// lately (see suspects and carryCeiling), and picks the event's action.
// With count, the decision is counted in waitroom_challenge_decisions_total
// (once per place: at the challenge, or at a CAPTCHA-only join).
func (p *Proxy) assess(ev *event, r *challenge.Request, count bool) (challenge.Decision, int) {
	d := p.opts.Defence
	var res challenge.Result
	if d.Scorer.Slow() {
		sctx, cancel := context.WithTimeout(p.base, d.ScoreTimeout)
		res = d.Scorer.Score(sctx, r)
		cancel()
	} else {
		// Fast signals judge in the calling goroutine and wait for
		// nothing: the timeout, a timer set and stopped on every
		// scoring, would bound nothing.
		res = d.Scorer.Score(p.base, r)
	}
	for _, rs := range res.Reasons {
		p.dm.reasons.WithLabelValues(rs.Reason).Inc()
	}
	remembered := p.suspects.raise(r.IP, challenge.TLSStack(r.JA4), res.Score, r.Now)
	score := max(res.Score, min(remembered, carryCeiling(ev.Challenge.Policy.Bands)))
	dec := ev.Challenge.Policy.Decide(score)
	if count {
		p.dm.decisions.WithLabelValues(ev.ID, string(dec.Would), string(dec.Apply)).Inc()
		p.engine.NoteDefence(ev.ID, string(dec.Apply)) // for the minute records
	}
	if dec.Would != dec.Apply {
		p.log.Info("proxy: bot defence dry run", "event", ev.ID, "ip", r.IP, "score", score, "join", r.Join,
			"would", dec.Would, "applied", dec.Apply, "reasons", reasonList(res.Reasons))
	} else if dec.Apply != challenge.ActionLightPoW {
		p.log.Debug("proxy: bot defence", "event", ev.ID, "ip", r.IP, "score", score, "join", r.Join,
			"action", dec.Apply, "reasons", reasonList(res.Reasons))
	}
	return dec, score
}

// work is the proof of work the event asks for action.
func (ch *EventChallenge) work(a challenge.Action) Work {
	switch a {
	case challenge.ActionLightPoW:
		return ch.Light
	case challenge.ActionCaptcha:
		if ch.Captcha != nil {
			return ch.Light // the CAPTCHA is the cost (see challengeFor)
		}
	}
	return ch.Heavy
}

// covers reports whether challenge c asked at least the work w.
func (w Work) coveredBy(c challenge.Challenge) bool {
	return uint64(c.Puzzles)<<c.Bits >= uint64(w.Puzzles)<<w.Bits
}

// reasonList logs reasons as signal:reason=points, formatted only when the
// record is written.
type reasonList []challenge.Reason

func (rs reasonList) LogValue() slog.Value {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Signal + ":" + r.Reason + "=" + strconv.Itoa(r.Points)
	}
	return slog.AnyValue(out)
}

// challengeFor answers GET {prefix}/api/challenge?event=E: what the
// visitor must do to join, and the proof of work to do it with.
func (p *Proxy) challengeFor(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr) {
	b := append(make([]byte, 0, 512), `{"event":`...)
	b = jsonenc.String(b, ev.ID)
	if ev.Challenge == nil {
		b = append(b, `,"action":"none"}`...)
		writeJSON(ctx, b)
		return
	}
	now := p.clock()
	dec, score, r := p.decide(ctx, ev, ip, now)
	work := ev.Challenge.work(dec.Apply)
	switch dec.Apply {
	case challenge.ActionBlock:
		p.dm.refusals.WithLabelValues(ev.ID, "blocked").Inc()
		writeError(ctx, fasthttp.StatusForbidden, errBlocked)
		return
	case challenge.ActionCaptcha:
		if ev.Challenge.Captcha != nil {
			b = append(b, `,"action":"captcha","captcha":`...)
			b = append(b, ev.widget...)
			b = append(b, '}')
			writeJSON(ctx, b)
			return
		}
		// No provider: the heavy work (ev.Challenge.work). A shadowed
		// visitor is not told either: they get the heavy work, and
		// their join succeeds into a place that is never admitted.
	}
	token, c, err := p.opts.Defence.PoW.Issue(challenge.IssueParams{Event: ev.ID,
		Binding: challengeBinding(r), Bits: work.Bits, Puzzles: work.Puzzles,
		Score: uint8(min(max(score, 0), 100)), TTL: p.opts.Defence.TTL, Now: now})
	if err != nil {
		p.log.Error("proxy: issuing a challenge failed", "event", ev.ID, "err", err)
		writeError(ctx, fasthttp.StatusInternalServerError, errInternal)
		return
	}
	b = append(b, `,"action":"pow","pow":{"token":`...)
	b = jsonenc.String(b, token)
	b = append(b, `,"seed":"`...)
	b = append(b, challenge.SeedHex(c)...)
	b = append(b, `","bits":`...)
	b = strconv.AppendInt(b, int64(c.Bits), 10)
	b = append(b, `,"puzzles":`...)
	b = strconv.AppendInt(b, int64(c.Puzzles), 10)
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, c.ExpiresAt)
	b = append(b, `}`...)
	if ev.Challenge.NoJSCaptcha && ev.Challenge.Captcha != nil {
		b = append(b, `,"captcha":`...)
		b = append(b, ev.widget...)
	}
	b = append(b, '}')
	writeJSON(ctx, b)
}

func writeJSON(ctx *fasthttp.RequestCtx, b []byte) {
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	setNoStore(&ctx.Response.Header)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.SetBody(b)
}

// powSolution is the join body's "pow", decoded with the rest of the
// body (strictly: unknown fields and wrong types are refused there).
type powSolution struct {
	Token  string
	Nonces []uint64
}

// field reads one field of the join body's "pow".
func (s *powSolution) field(d *jsonstrict.Reader, name []byte) (err error) {
	if d.Null() {
		return nil
	}
	switch string(name) {
	case "token":
		s.Token, err = d.String("pow.token")
	case "nonces":
		// Sized for production's puzzle count: appending from empty
		// would grow it five times.
		s.Nonces = make([]uint64, 0, challenge.DefaultPuzzles)
		err = d.Array("pow.nonces", func(d *jsonstrict.Reader, _ int) error {
			var n uint64
			var err error
			if !d.Null() { // null is 0, as encoding/json reads it
				n, err = d.Uint("pow.nonces", math.MaxUint64)
			}
			s.Nonces = append(s.Nonces, n)
			return err
		})
	default:
		err = jsonstrict.UnknownField("pow", name)
	}
	return err
}

// admitJoin runs the bot defence on a join: it verifies the solution the
// join carries and says whether the visitor joins the real queue (true),
// the shadow queue (shadow), or is refused (ok false, response written).
//
// The join is scored again, with what only a join carries (the page's
// client signals), and the higher of that score and the challenge's
// decides: a client cannot fetch its challenge looking like a browser and
// join looking like a script. The solution must come from the very client
// the challenge was issued to (challengeBinding), and must be at least the
// work the join's score asks; short of it, the client is told to fetch a
// new challenge (challenge_invalid), which asks the work its score calls
// for, without saying why.
func (p *Proxy) admitJoin(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, req *joinRequest, now time.Time) (shadow bool, once *admission.Once, ok bool) {
	ch := ev.Challenge
	deny := func(status int, reason string, e *apiError) (bool, bool) {
		p.dm.refusals.WithLabelValues(ev.ID, reason).Inc()
		writeError(ctx, status, e)
		return false, false
	}
	refuse := func(status int, reason string, e *apiError) (bool, *admission.Once, bool) {
		deny(status, reason, e)
		return false, nil, false
	}
	r := p.riskRequest(ctx, ev, ip, now)
	r.Join, r.Client = true, req.Client
	switch sol := req.PoW; {
	case sol != nil:
		if sol.Token == "" {
			return refuse(fasthttp.StatusBadRequest, "invalid", errChallengeInvalid)
		}
		c, err := p.opts.Defence.PoW.Verify(sol.Token, sol.Nonces, ev.ID, challengeBinding(r), now)
		switch {
		case errors.Is(err, challenge.ErrExpired):
			return refuse(fasthttp.StatusForbidden, "expired", errChallengeExpired)
		case errors.Is(err, challenge.ErrWrongBinding):
			return refuse(fasthttp.StatusForbidden, "binding", errChallengeInvalid)
		case err != nil:
			return refuse(fasthttp.StatusForbidden, "invalid", errChallengeInvalid)
		}
		_, score := p.assess(ev, r, false)
		dec := ch.Policy.Decide(max(score, int(c.Score)))
		switch dec.Apply {
		case challenge.ActionBlock:
			return refuse(fasthttp.StatusForbidden, "blocked", errBlocked)
		case challenge.ActionCaptcha:
			if ch.Captcha != nil && !p.captchaPassed(ctx, ev, ip, req.Captcha, deny) {
				return false, nil, false
			}
		}
		if !ch.work(dec.Apply).coveredBy(c) {
			return refuse(fasthttp.StatusForbidden, "short", errChallengeInvalid)
		}
		// The solution is spent by the join itself (see powOnce).
		return dec.Apply == challenge.ActionShadow, p.powOnce(c), true
	case req.Captcha != "" && ch.Captcha != nil:
		// The CAPTCHA-only path: the captcha band, or (when configured)
		// visitors without JavaScript. The score is taken now.
		dec, _ := p.assess(ev, r, true)
		switch {
		case dec.Apply == challenge.ActionBlock:
			return refuse(fasthttp.StatusForbidden, "blocked", errBlocked)
		case dec.Apply != challenge.ActionCaptcha && dec.Apply != challenge.ActionShadow && !ch.NoJSCaptcha:
			return refuse(fasthttp.StatusForbidden, "no_challenge", errChallengeNeeded)
		}
		if !p.captchaPassed(ctx, ev, ip, req.Captcha, deny) {
			return false, nil, false
		}
		return dec.Apply == challenge.ActionShadow, nil, true
	}
	return refuse(fasthttp.StatusForbidden, "no_challenge", errChallengeNeeded)
}

// powOnce is the one-time value a join with the solution of c spends:
// the challenge's id. The engine spends it as part of the join, in the
// same write as the new place on a store that can (one round trip, where
// the replay guard first and the place second took two), else through
// the replay guard before the join does anything. Either way one
// solution buys one place, across every replica.
func (p *Proxy) powOnce(c challenge.Challenge) *admission.Once {
	pow := p.opts.Defence.PoW
	return &admission.Once{ID: c.ID[:], Until: c.ExpiresAt,
		Spend: func(ctx context.Context) error { return pow.Redeem(ctx, c) }}
}

// replayRefused answers a join the engine refused because its proof of
// work was spent before (409 challenge_used), and reports whether err
// was that.
func (p *Proxy) replayRefused(ctx *fasthttp.RequestCtx, ev *event, err error) bool {
	if !errors.Is(err, admission.ErrOnceUsed) && !errors.Is(err, challenge.ErrReplayed) {
		return false
	}
	p.dm.refusals.WithLabelValues(ev.ID, "replayed").Inc()
	writeError(ctx, fasthttp.StatusConflict, errChallengeUsed)
	return true
}

// captchaPassed verifies a CAPTCHA token, writing the refusal when it
// fails.
func (p *Proxy) captchaPassed(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, token string,
	refuse func(int, string, *apiError) (bool, bool)) bool {
	if token == "" {
		refuse(fasthttp.StatusForbidden, "captcha_failed", errCaptchaNeeded)
		return false
	}
	vctx, cancel := context.WithTimeout(p.base, 10*time.Second)
	err := ev.Challenge.Captcha.Verify(vctx, token, ip)
	cancel()
	switch {
	case err == nil:
		return true
	case errors.Is(err, challenge.ErrCaptchaUnavailable):
		p.log.Warn("proxy: the CAPTCHA provider is unavailable", "event", ev.ID, "err", err)
		p.dm.refusals.WithLabelValues(ev.ID, "captcha_unavailable").Inc()
		ctx.Response.Header.Set("Retry-After", "5")
		writeError(ctx, fasthttp.StatusServiceUnavailable, errUnavailable)
		return false
	default:
		refuse(fasthttp.StatusForbidden, "captcha_failed", errCaptchaFailed)
		return false
	}
}

// notify tells Options.Notify, if set.
func (p *Proxy) notify(n Notice) {
	if p.opts.Notify != nil {
		p.opts.Notify(n)
	}
}
