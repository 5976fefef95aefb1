package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of ControllerConfig (Tick defaults to DefaultTick).
const (
	DefaultTargetP95       = 800 * time.Millisecond
	DefaultTargetErrorRate = 0.01
	DefaultInitialActive   = 50
	DefaultMinActive       = 10
	DefaultDecrease        = 0.7
)

// Tuning of the controller that is not configuration.
const (
	// ctlBinding: the limit grows only while usage (active visitors plus
	// those expected to come) fills at least this share of it. A limit
	// that is not binding has not been tried against the origin.
	ctlBinding = 0.9
	// ctlIdleDrift is the time constant with which a limit that is not
	// binding drifts down towards usage/ctlBinding: after a short lull
	// the limit is still about what the origin was last seen to take;
	// after minutes of it, it is what is in use now.
	ctlIdleDrift = time.Minute
	// ctlCooldownTicks is the least number of ticks between two
	// decreases; a decrease also waits until it shows (see Step).
	ctlCooldownTicks = 3
	// ctlClaimSoon and ctlClaimDecay model how soon visitors who come
	// claim their turn (near the front they poll every 2 s): an admission
	// is expected in full for ctlClaimSoon, then fades exponentially with
	// ctlClaimDecay. Pending visitors beyond what the recent admissions
	// leave expected are taken for no-shows waiting out their grace;
	// ctlClaimCovered is the history this estimate needs.
	ctlClaimSoon    = 5 * time.Second
	ctlClaimDecay   = 5 * time.Second
	ctlClaimCovered = 30 * time.Second
	// ctlMaxNoShow bounds the no-show rate the controller believes.
	ctlMaxNoShow = 0.9
	// ctlHistory is how far back the controller remembers its outputs.
	ctlHistory = time.Minute
	// ctlDefaultIncreaseShare and ctlDefaultIncreaseMin make the default
	// additive step: 5 % of the limit, at least 2.
	ctlDefaultIncreaseShare = 0.05
	ctlDefaultIncreaseMin   = 2
	// ctlMinHeadroom is the least share of the increase applied as the
	// p95 nears its target; ctlBaseCreep the time constant with which the
	// unloaded p95 follows a p95 that stays higher (see headroom).
	ctlMinHeadroom = 0.1
	ctlBaseCreep   = 5 * time.Minute
	// ctlClearP95 and ctlClearErrors are how far past their targets the
	// p95 and the error rate are a clear breach, cut by the full
	// Decrease; ctlMinCut is the least share of that cut for a marginal
	// breach (see decrease).
	ctlClearP95    = 1.5
	ctlClearErrors = 2
	ctlMinCut      = 0.1
	// ctlBucketBurst is the burst of the max_new_per_minute bucket, in
	// time at the even pace (at least one visitor): an idle site lets the
	// first visitors in at once, a busy one at the even pace.
	ctlBucketBurst = 5 * time.Second
	// ctlStateVersion tags MarshalState's encoding.
	ctlStateVersion = 1
)

// ControllerInput is what the controller sees at one tick.
type ControllerInput struct {
	// Now is the tick's time.
	Now time.Time
	// Measurements are the origin's figures for admitted traffic over
	// the last tick; Active is the number of visitors holding a pass and
	// seen recently.
	Measurements
	// Pending counts visitors reached (the serving counter passed them)
	// who have neither claimed their turn nor turned into a no-show yet,
	// as numbers: not discounted for no-shows (the controller does that).
	Pending int
	// NoShowRate is the measured share of reached visitors who never
	// came (0..1).
	NoShowRate float64
	// Remaining is how many seats the linked inventory has left; it is
	// valid when RemainingKnown.
	Remaining      int
	RemainingKnown bool
	// Caps are the caps in force (0: no cap).
	Caps Caps
	// AdmittedLastMinute is the sum of Admit (expected arrivals, not the
	// counter's advance inflated for no-shows) over the ticks in
	// (Now-60s, Now). The controller also remembers its own outputs and
	// honours the larger of the two.
	AdmittedLastMinute int
	// Waiting is how many queued visitors could be let in now (drawn and
	// not reached), valid when WaitingKnown: Admit never exceeds it, so
	// a room with nobody waiting spends none of max_new_per_minute.
	Waiting      int
	WaitingKnown bool
	// PassThrough asks for pass-through slots (threshold mode with nobody
	// queued): the room left under the limit is offered as Slots.
	PassThrough bool
	// Taken is how many pass-through slots were taken since the last
	// tick: visitors let straight in, counted as admitted and as usage.
	Taken int
}

// ControllerOutput is the controller's decision at one tick.
type ControllerOutput struct {
	// Limit is the active-visitor limit now.
	Limit int
	// Admit is how many new visitors to let in at this tick, in expected
	// arrivals: the engine inflates the serving counter's advance for
	// no-shows.
	Admit int
	// SoldOut is set when the linked inventory is known to be empty
	// (Admit is then 0).
	SoldOut bool
	// Slots is how many visitors may pass straight through until the
	// next tick (with PassThrough; 0 otherwise).
	Slots int
	// Decision is the tick's decision with its reason and the figures
	// behind it.
	Decision Decision
}

// Controller sizes admission by what the origin is measured to take: an
// AIMD controller of the number of active visitors. Each tick the limit
// grows additively while the origin's p95 latency and error rate are
// within their targets and the limit is actually in use, and shrinks
// multiplicatively (at most once per cooldown; by Decrease when a target
// is clearly exceeded, by less when only just) when either is exceeded.
// New visitors are let in to fill the room under the limit, bounded by
// the caps and the remaining inventory.
//
// A Controller is not safe for concurrent use: the leader's tick owns it.
type Controller struct {
	cfg     ControllerConfig
	perSeat float64
	drift   float64 // share of the gap closed per tick by a limit that is not binding
	creep   float64 // share of the gap closed per tick by the unloaded p95

	limit float64
	// cooling is set from a decrease until it has shown in the
	// measurements; sinceDecrease counts the ticks since it, and
	// sinceSettled the ticks since usage came down to the limit after it
	// (-1: not yet).
	cooling       bool
	sinceDecrease int
	sinceSettled  int
	started       time.Time     // the first tick (of this leader or of those before it)
	hist          ctlLog        // Admit outputs of the last minute
	base          time.Duration // the origin's p95 when it is not loaded (see headroom)
	// tokens is the max_new_per_minute bucket as of refilled (-1: full,
	// not yet used).
	tokens   float64
	refilled time.Time
}

// NewController returns a controller with cfg's zero fields set to their
// defaults; visitorsPerSeat bounds usage by the remaining inventory
// (DefaultVisitorsPerSeat when ≤ 0).
func NewController(cfg ControllerConfig, visitorsPerSeat float64) *Controller {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.TargetP95 <= 0 {
		cfg.TargetP95 = DefaultTargetP95
	}
	if !(cfg.TargetErrorRate > 0) {
		cfg.TargetErrorRate = DefaultTargetErrorRate
	}
	if cfg.MinActive <= 0 {
		cfg.MinActive = DefaultMinActive
	}
	if cfg.InitialActive <= 0 {
		cfg.InitialActive = DefaultInitialActive
	}
	cfg.InitialActive = max(cfg.InitialActive, cfg.MinActive)
	if cfg.Increase < 0 {
		cfg.Increase = 0
	}
	if !(cfg.Decrease > 0 && cfg.Decrease < 1) {
		cfg.Decrease = DefaultDecrease
	}
	if !(visitorsPerSeat > 0) {
		visitorsPerSeat = DefaultVisitorsPerSeat
	}
	return &Controller{
		cfg:          cfg,
		perSeat:      visitorsPerSeat,
		drift:        -math.Expm1(-float64(cfg.Tick) / float64(ctlIdleDrift)),
		creep:        -math.Expm1(-float64(cfg.Tick) / float64(ctlBaseCreep)),
		limit:        float64(cfg.InitialActive),
		sinceSettled: -1,
		tokens:       -1,
	}
}

// Step runs one tick: it updates the limit from the measurements and
// decides how many visitors to let in.
//
// Usage, what occupies the limit, is the active visitors plus the pending
// ones expected to come: Pending × (1 − NoShowRate), but no more than the
// recent admissions leave expected (visitors who come, come within
// seconds; older pending numbers are nearly all no-shows waiting out
// their grace).
//
// The limit L:
//   - origin unhealthy (p95 above target, or error rate above target): L
//     becomes d × min(L, usage/0.9), where d is Decrease for a clear
//     breach and nearer 1 for a marginal one (see decrease), unless the
//     last decrease is still cooling down: at least ctlCooldownTicks
//     ticks, and until usage has come down to the limit and the
//     measurements cover a whole tick at that level. One bad burst thus
//     costs one decrease, while an origin that stays slow at the lower
//     level is cut again;
//   - origin healthy and usage ≥ 90 % of L: L grows by Increase, scaled
//     down as the p95 nears its target (see headroom);
//   - usage < 90 % of L (the queue is empty, or a cap or the inventory
//     binds): L drifts down towards usage/0.9 with a one-minute time
//     constant, so it never grows without bound while unused;
//   - no measurements (no request rate and no p95): L holds or drifts.
//
// L stays within [MinActive, Caps.MaxActive]. The room is L − usage,
// bounded by MaxNewPerMinute and by the inventory (usage + room ≤
// Remaining × visitorsPerSeat); 0 when sold out. MaxNewPerMinute is a
// ceiling, not a pace to wait for: a token bucket refilled continuously
// at MaxNewPerMinute/60 a second, holding ctlBucketBurst of it (at
// least one visitor) and full at the start, so that an idle site lets
// its first visitors in at the first tick; and never more than
// MaxNewPerMinute in any minute. Admit is the room, up to Waiting; with
// PassThrough, Slots is what is left of it.
func (c *Controller) Step(in ControllerInput) ControllerOutput {
	now := in.Now
	first := c.started.IsZero()
	if first {
		c.started = now
	}
	c.hist.prune(now.Add(-ctlHistory))
	taken := max(in.Taken, 0)
	c.hist.add(now, taken)
	c.refill(now, in.Caps.MaxNewPerMinute, taken)
	usage := c.usage(in) + float64(taken)
	reason := c.adjust(in, usage, first)
	out := ControllerOutput{Limit: int(c.limit)}
	out.Decision = Decision{At: now, Reason: reason, Limit: out.Limit, Usage: usage, Active: float64(max(in.Active, 0)),
		Pending: usage - float64(max(in.Active, 0)), Latency: in.LatencyP50, BaseLatency: c.base, P95: in.LatencyP95,
		RequestRate: in.RequestRate, ErrorRate: in.ErrorRate}
	if in.RemainingKnown && in.Remaining <= 0 {
		out.SoldOut = true
		out.Decision.Reason = ReasonSoldOut
		return out
	}
	room := c.room(in, usage)
	out.Admit = room
	if in.WaitingKnown {
		out.Admit = min(room, max(in.Waiting, 0))
	}
	if in.PassThrough {
		out.Slots = room - out.Admit
	}
	out.Decision.Admit, out.Decision.Slots = out.Admit, out.Slots
	c.hist.add(now, out.Admit)
	if in.Caps.MaxNewPerMinute > 0 {
		c.tokens -= float64(out.Admit) // Slots are charged when taken
	}
	return out
}

// refill brings the max_new_per_minute bucket up to now and charges it
// with the slots taken since the last tick.
func (c *Controller) refill(now time.Time, perMinute, taken int) {
	if perMinute <= 0 {
		c.tokens, c.refilled = -1, now
		return
	}
	burst := max(1, float64(perMinute)*float64(ctlBucketBurst)/float64(time.Minute))
	if c.tokens < 0 || c.refilled.IsZero() {
		c.tokens = burst
	} else if dt := now.Sub(c.refilled); dt > 0 {
		c.tokens += float64(perMinute) * dt.Minutes()
	}
	c.tokens = max(0, min(c.tokens, burst)-float64(taken))
	c.refilled = now
}

// usage is what occupies the limit: active visitors and the pending ones
// expected to come.
func (c *Controller) usage(in ControllerInput) float64 {
	ns := in.NoShowRate
	if !(ns > 0) {
		ns = 0
	}
	ns = min(ns, ctlMaxNoShow)
	pending := float64(max(in.Pending, 0)) * (1 - ns)
	if !in.Now.Add(-ctlClaimCovered).Before(c.started) {
		pending = min(pending, c.hist.expected(in.Now))
	}
	return float64(max(in.Active, 0)) + pending
}

type ctlHealth int

const (
	ctlUnknown ctlHealth = iota // no requests measured
	ctlHealthy
	ctlUnhealthy
)

func (c *Controller) health(m Measurements) ctlHealth {
	switch {
	case m.LatencyP95 > c.cfg.TargetP95 || m.ErrorRate > c.cfg.TargetErrorRate:
		return ctlUnhealthy
	case m.RequestRate > 0 || m.LatencyP95 > 0:
		return ctlHealthy
	}
	return ctlUnknown
}

// adjust moves the limit (see Step); at the first tick nothing was on
// offer yet, so a limit not in use is no sign of a lull.
func (c *Controller) adjust(in ControllerInput, usage float64, first bool) Reason {
	if c.sinceDecrease < math.MaxInt32 {
		c.sinceDecrease++
	}
	if c.cooling {
		switch {
		case c.sinceSettled >= 0:
			c.sinceSettled++
		case usage <= c.limit+1:
			c.sinceSettled = 0
		}
		if c.sinceDecrease >= ctlCooldownTicks && c.sinceSettled >= 1 {
			c.cooling = false
		}
	}
	h := c.health(in.Measurements)
	if h == ctlHealthy {
		c.noteBase(in.LatencyP95)
	}
	reason := ReasonSteady
	switch {
	case first:
		reason = ReasonStart
	case h == ctlUnknown:
		reason = ReasonNoData
	case h == ctlUnhealthy && in.ErrorRate > c.cfg.TargetErrorRate:
		reason = ReasonErrors
	case h == ctlUnhealthy:
		reason = ReasonLatency
	}
	switch {
	case h == ctlUnhealthy:
		if !c.cooling {
			base := min(c.limit, max(usage/ctlBinding, float64(c.cfg.MinActive)))
			c.limit = base * c.decrease(in.Measurements)
			c.cooling, c.sinceDecrease, c.sinceSettled = true, 0, -1
		}
	case usage >= ctlBinding*c.limit:
		if h == ctlHealthy {
			c.limit += c.increase() * c.headroom(in.LatencyP95)
			reason = ReasonProbe
		}
	case !first:
		floor := usage / ctlBinding
		c.limit -= (c.limit - floor) * c.drift
		reason = ReasonIdle
	}
	if math.IsNaN(c.limit) || math.IsInf(c.limit, 0) {
		c.limit = float64(c.cfg.InitialActive)
	}
	c.limit = max(c.limit, float64(c.cfg.MinActive))
	if m := in.Caps.MaxActive; m > 0 {
		c.limit = min(c.limit, float64(m))
	}
	return reason
}

// noteBase follows the origin's unloaded p95: the least healthy p95,
// creeping up towards a p95 that stays higher (the origin got slower for
// good) with the time constant ctlBaseCreep.
func (c *Controller) noteBase(p95 time.Duration) {
	switch {
	case p95 <= 0:
	case c.base <= 0 || p95 < c.base:
		c.base = p95
	default:
		c.base += time.Duration(float64(p95-c.base) * c.creep)
	}
}

// headroom scales the increase by where the p95 is between the unloaded
// p95 and the target: full at the unloaded p95, down to ctlMinHeadroom at
// the target. Where latency rises with load before the target is crossed,
// the limit slows down on approach instead of overshooting by what the
// measurement delay lets through.
func (c *Controller) headroom(p95 time.Duration) float64 {
	if p95 <= c.base || c.base >= c.cfg.TargetP95 {
		return 1
	}
	return max(ctlMinHeadroom, float64(c.cfg.TargetP95-p95)/float64(c.cfg.TargetP95-c.base))
}

// decrease is the factor of a decrease: Decrease for a clear breach (p95
// at ctlClearP95 × its target or beyond, or the error rate at
// ctlClearErrors × its target), proportionally less for a marginal one,
// at least ctlMinCut of the full cut. An origin hovering at its target
// is nudged, not knocked back by 30 % with seconds of admission stopped
// while the visitors inside drain; one well past it still is.
func (c *Controller) decrease(m Measurements) float64 {
	lat := (float64(m.LatencyP95)/float64(c.cfg.TargetP95) - 1) / (ctlClearP95 - 1)
	errs := (m.ErrorRate/c.cfg.TargetErrorRate - 1) / (ctlClearErrors - 1)
	severity := min(1, max(ctlMinCut, lat, errs))
	return 1 - (1-c.cfg.Decrease)*severity
}

func (c *Controller) increase() float64 {
	if c.cfg.Increase > 0 {
		return float64(c.cfg.Increase)
	}
	return max(ctlDefaultIncreaseMin, ctlDefaultIncreaseShare*c.limit)
}

// room is how many new visitors fit at this tick.
func (c *Controller) room(in ControllerInput, usage float64) int {
	room := math.Floor(c.limit - usage)
	if mn := in.Caps.MaxNewPerMinute; mn > 0 {
		// The bucket never holds more than the last minute leaves: once
		// the minute's ceiling binds, the pace resumes evenly instead of
		// in a burst when the window moves on.
		last := max(in.AdmittedLastMinute, c.hist.sum())
		c.tokens = min(c.tokens, float64(max(0, mn-last)))
		room = min(room, math.Floor(c.tokens))
	}
	if in.RemainingKnown {
		room = min(room, math.Floor(float64(in.Remaining)*c.perSeat-usage))
	}
	if !(room > 0) {
		return 0
	}
	return int(min(room, math.MaxInt32))
}

// ctlState is the controller's state as MarshalState encodes it.
type ctlState struct {
	V             int        `json:"v"`
	Limit         float64    `json:"limit"`
	Cooling       bool       `json:"cooling,omitempty"`
	SinceDecrease int        `json:"since_decrease"`
	SinceSettled  int        `json:"since_settled"`
	Started       int64      `json:"started,omitempty"`  // Unix ns
	BaseP95       int64      `json:"base_p95,omitempty"` // ns
	Admits        [][2]int64 `json:"admits,omitempty"`   // [Unix ns, Admit], oldest first
	// Tokens and Refilled are the max_new_per_minute bucket (absent:
	// full).
	Tokens   *float64 `json:"tokens,omitempty"`
	Refilled int64    `json:"refilled,omitempty"` // Unix ns
}

// MarshalState encodes the controller's state (JSON) so that a new leader
// carries on where this one stopped.
func (c *Controller) MarshalState() []byte {
	s := ctlState{V: ctlStateVersion, Limit: c.limit, Cooling: c.cooling,
		SinceDecrease: c.sinceDecrease, SinceSettled: c.sinceSettled, BaseP95: int64(c.base)}
	if !c.started.IsZero() {
		s.Started = c.started.UnixNano()
	}
	if c.tokens >= 0 && !c.refilled.IsZero() {
		tokens := c.tokens
		s.Tokens, s.Refilled = &tokens, c.refilled.UnixNano()
	}
	for i := range c.hist.recs.len() {
		r := c.hist.recs.at(i)
		s.Admits = append(s.Admits, [2]int64{r.at, int64(r.n)})
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic("admission: encoding controller state: " + err.Error()) // plain numbers cannot fail
	}
	return b
}

var errControllerState = errors.New("admission: unreadable controller state")

// RestoreState replaces the controller's state with one from
// MarshalState; on error the controller is unchanged. The configuration
// stays the one given to NewController.
func (c *Controller) RestoreState(b []byte) error {
	var s ctlState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: %v", errControllerState, err)
	}
	if s.V != ctlStateVersion {
		return fmt.Errorf("%w: version %d", errControllerState, s.V)
	}
	if !(s.Limit > 0) || math.IsInf(s.Limit, 0) || s.SinceDecrease < 0 || s.SinceSettled < -1 || s.BaseP95 < 0 ||
		(s.Tokens != nil && (!(*s.Tokens >= 0) || math.IsInf(*s.Tokens, 0) || s.Refilled <= 0)) {
		return fmt.Errorf("%w: out of range", errControllerState)
	}
	var hist ctlLog
	for i, a := range s.Admits {
		if a[1] <= 0 || a[1] > math.MaxInt32 || (i > 0 && a[0] < s.Admits[i-1][0]) {
			return fmt.Errorf("%w: admission history", errControllerState)
		}
		hist.push(ctlRecord{at: a[0], n: int(a[1])})
	}
	c.limit = max(s.Limit, float64(c.cfg.MinActive))
	c.cooling, c.sinceDecrease, c.sinceSettled = s.Cooling, s.SinceDecrease, s.SinceSettled
	c.base = time.Duration(s.BaseP95)
	c.started = time.Time{}
	if s.Started != 0 {
		c.started = time.Unix(0, s.Started)
	}
	c.hist = hist
	c.tokens, c.refilled = -1, time.Time{}
	if s.Tokens != nil {
		c.tokens, c.refilled = *s.Tokens, time.Unix(0, s.Refilled)
	}
	return nil
}

// ctlRecord is one tick's Admit.
type ctlRecord struct {
	at int64 // Unix ns
	n  int
}

// ctlLog is a ring of the recent non-zero Admit outputs, oldest first,
// with their running sum.
type ctlLog struct {
	recs  ring[ctlRecord]
	total int
}

func (l *ctlLog) push(r ctlRecord) {
	l.recs.push(r)
	l.total += r.n
}

func (l *ctlLog) add(t time.Time, n int) {
	if n > 0 {
		l.push(ctlRecord{at: t.UnixNano(), n: n})
	}
}

// prune forgets the records at or before t.
func (l *ctlLog) prune(t time.Time) {
	cut := t.UnixNano()
	for l.recs.len() > 0 && l.recs.at(0).at <= cut {
		l.total -= l.recs.at(0).n
		l.recs.pop()
	}
}

func (l *ctlLog) sum() int { return l.total }

// expected is how many of the recorded admissions are expected not to
// have come yet at t (see ctlClaimSoon).
func (l *ctlLog) expected(t time.Time) float64 {
	now, s := t.UnixNano(), 0.0
	for i := l.recs.len() - 1; i >= 0; i-- {
		r := l.recs.at(i)
		age := time.Duration(now - r.at)
		if age <= ctlClaimSoon {
			s += float64(r.n)
			continue
		}
		w := math.Exp(-float64(age-ctlClaimSoon) / float64(ctlClaimDecay))
		if w < 1e-3 {
			break
		}
		s += float64(r.n) * w
	}
	return s
}
