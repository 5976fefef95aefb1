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
	DefaultInitialActive   = 20
	DefaultMinActive       = 10
	DefaultDecrease        = 0.5
)

// Tuning of the controller that is not configuration.
const (
	// ctlAllowance is the line the controller keeps at the origin: its
	// target mean latency is the baseline × (1 + ctlAllowance), a few
	// requests waiting so that no server idles between two visitors, and
	// far from the 2 × baseline at which visitors feel it.
	ctlAllowance = 0.15
	// ctlFollow is the share of the gap to the model the target closes
	// per tick, unless the model is below ctlDropAt of the target.
	ctlFollow = 0.5
	ctlDropAt = 0.8
	// ctlTailGuard: a p95 beyond this multiple of the baseline p95 eases
	// the target by ctlTailEase a tick, whatever the mean says, so that
	// the tail stays clear of the 2 × baseline visitors notice.
	ctlTailGuard = 1.8
	ctlTailEase  = 0.97
	// ctlTailFloor: a p95 less than this above the baseline p95 is no
	// tail, whatever the ratio: an origin answering in half a millisecond
	// doubles its p95 with a scheduler's jitter, which no visitor feels,
	// and easing on it shrank a three-replica sale's limit from 50 to 13.
	ctlTailFloor = 2 * time.Millisecond
	// ctlProbeBelow: a mean latency within this share of the baseline
	// means nothing waits at the origin, so the limit may grow faster
	// than the model says (a probe); ctlQueueAbove: beyond this share a
	// line has formed and what the origin serves is its capacity.
	ctlProbeBelow = 0.05
	ctlQueueAbove = 0.2
	// ctlStartGain is how much the active visitors may grow per round
	// until the origin first queues (a slow start: doubling per round);
	// ctlReturnGain while they are below what the origin took in the last
	// ctlCapLong; ctlProbeGain beyond it (a capacity not seen yet is
	// approached a quarter at a time, which its 2 × baseline never sees).
	ctlStartGain = 2
	// ctlRoundShare: the slow start waits for the visitors on their way
	// to be fewer than this share of the active ones before it doubles
	// again (a round).
	ctlRoundShare  = 0.25
	ctlReturnGain  = 1.25
	ctlReturnBelow = 0.8
	ctlProbeGain   = 1.1
	// ctlCalmTicks is how many ticks in a row the origin must answer at
	// its baseline before the limit grows past the slow start: one
	// calm tick is a lull between two waves of visitors as often as not.
	ctlCalmTicks = 2
	// ctlBaseWindow is how long the unloaded latency (the least mean of
	// a tick) is remembered; ctlCapLong how long the most the origin
	// served while queueing is.
	ctlBaseWindow = 2 * time.Minute
	ctlCapLong    = 5 * time.Minute
	ctlCapRecent  = 15 * time.Second
	ctlBaseCreep  = 5 * time.Minute
	// ctlMinAnswered is the least number of answered requests a tick's
	// latencies are trusted on; a tick with fewer is merged with the
	// ticks before it, up to ctlMergeTicks of them.
	ctlMinAnswered = 20
	ctlMergeTicks  = 5
	ctlFewAnswered = 5
	// ctlSmooth is the weight of a new tick in the smoothed think time.
	ctlSmooth = 0.3
	// ctlPaceHorizon is the ticks over which the room under the limit
	// is let in, on top of the pace at which visitors leave: admissions
	// spread over the seconds instead of arriving together, and a crowd
	// that turns over in waves does not keep its waves.
	ctlPaceHorizon = 2
	// ctlUsageSmooth is the weight of a new tick in the smoothed usage
	// the pace corrects by; ctlSlack the share above the limit that
	// usage may reach between two ticks of pace.
	ctlUsageSmooth = 0.5
	ctlSlack       = 0.2
	// ctlThinkMin and ctlThinkSteady: the think time is measured at
	// ticks with at least ctlThinkMin active visitors, fewer than
	// ctlThinkSteady of them more or less than at the tick before.
	ctlThinkMin    = 5
	ctlThinkSteady = 0.35
	// ctlDepartSmooth is the weight of a new tick in the smoothed
	// departures and request rate the pace is measured by.
	ctlDepartSmooth = 0.2
	// ctlTransitGain is the share of the active visitors' shortfall
	// from the target added to the transit room per tick, and
	// ctlTransitStep bounds the shortfall counted, as a share of the
	// target.
	ctlTransitGain = 0.15
	ctlTransitStep = 0.25
	// ctlBinding: the limit grows only while usage (active visitors plus
	// those expected to come) fills at least this share of it, or the
	// limit held the last admissions back. A limit that is not binding
	// has not been tried against the origin.
	ctlBinding = 0.9
	// ctlIdleDrift is the time constant with which a limit that is not
	// binding drifts down towards usage/ctlBinding: after a short lull
	// the limit is still about what the origin was last seen to take;
	// after minutes of it, it is what is in use now.
	ctlIdleDrift = time.Minute
	// ctlClaimSoon and ctlClaimDecay model how soon visitors who come
	// claim their turn (near the front they poll every 2 s): an admission
	// is expected in full for ctlClaimSoon, then fades exponentially with
	// ctlClaimDecay. Without the engine's count of the visitors arriving
	// (Arriving), pending visitors beyond what the recent admissions
	// leave expected are taken for no-shows waiting out their grace;
	// ctlClaimCovered is the history this estimate needs.
	ctlClaimSoon    = 5 * time.Second
	ctlClaimLately  = 20 * time.Second
	ctlLatelyMin    = 10
	ctlClaimDecay   = 5 * time.Second
	ctlClaimCovered = 30 * time.Second
	// ctlMaxNoShow bounds the no-show rate the controller believes.
	ctlMaxNoShow = 0.9
	// ctlHistory is how far back the controller remembers its outputs.
	ctlHistory = time.Minute
	// ctlStateVersion tags MarshalState's encoding.
	ctlStateVersion = 2
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
	// whose pass has not been used at the gate yet and who have not
	// turned into a no-show yet, as numbers: not discounted for no-shows
	// (the controller does that).
	Pending int
	// Arriving counts the pending visitors reached within the last
	// ctlClaimSoon, of ArrivingOffered reached then: visitors who come,
	// come within seconds, so these are the ones on their way (and the
	// measured share of no-shows among them). With ArrivingKnown unset
	// the controller estimates them from its own recent admissions.
	Arriving, ArrivingOffered int
	ArrivingKnown             bool
	// Lately and LatelyOffered are the same of the numbers reached
	// before those, up to ctlClaimLately ago: nearly all who come have
	// come by then, so the share still pending is the no-show rate of
	// the last seconds, known long before NoShowRate (measured past the
	// grace) is.
	Lately, LatelyOffered int
	// Unarrived counts the visitors admitted who have not come yet and
	// still may (reached within the grace and not come, or holding a
	// pass that was minted and not used and has not run out): they count
	// in full against Caps.MaxActive, no-shows or not, so that the cap
	// holds when they all come.
	Unarrived int
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

// Controller sizes admission by what the origin is measured to take.
//
// It controls the number of active visitors (those holding a pass and
// seen at the origin, plus those on their way) with a model of the origin
// in the manner of TCP BBR: the origin's unloaded latency (the least mean
// latency of a tick over the last ctlBaseWindow) and its capacity (the
// requests a second it serves while a line waits at it). By Little's law
// a visitor who thinks between requests keeps A/R − latency seconds of
// think time, so the origin running at its capacity R* with a mean
// latency of target = baseline × (1 + ctlAllowance) carries
// R* × (think + target) active visitors: that is the target, met every
// tick from fresh one-second figures rather than approached by small
// steps. While the origin answers at its baseline the target grows
// instead by a gain per round (see ctlStartGain): nothing says yet what
// it can take. Latency above target_p95 or errors above
// target_error_rate cut the target further, at most to Decrease of itself
// per tick.
//
// Visitors reached but not arrived yet count against the target, and so
// do the departures expected before they arrive (measured, as the usage
// that went away), which is what keeps the origin full while its
// visitors turn over.
//
// A Controller is not safe for concurrent use: the leader's tick owns it.
type Controller struct {
	cfg     ControllerConfig
	perSeat float64
	drift   float64 // share of the gap closed per tick by a limit that is not binding

	limit  float64 // on usage: the target and the departures expected before those on their way arrive
	target float64 // active visitors the origin is to carry
	// queued is set once the origin has been seen queueing: the slow
	// start is over.
	queued  bool
	started time.Time // the first tick (of this leader or of those before it)
	hist    ctlLog    // Admit outputs of the last minute

	base   ctlExtreme // least mean latency of a tick (seconds)
	base95 ctlExtreme // least p95 of a tick (seconds)
	// baseNow is the baseline as of baseAt (see baseline).
	baseNow float64
	baseAt  time.Time
	capLong ctlExtreme // most requests a second served while queueing
	// capNow is what the origin served at the last tick it queued, at
	// capAt (valid for ctlCapRecent).
	capNow float64
	capAt  time.Time
	// departs and reqs are the smoothed departures a tick (the usage
	// that went away) and requests a second: their ratio is the requests
	// a visitor makes.
	departs, reqs ctlEWMA
	usageAvg      ctlEWMA // usage, smoothed
	recent        ring[Measurements]
	think         ctlEWMA // seconds between a visitor's requests, less their latency
	// transit is the room kept above the target for visitors on their
	// way, who replace those leaving meanwhile: integrated from how far
	// the active visitors fall short of the target.
	transit float64
	// prevUsage and prevAdmit are the last tick's usage and admissions
	// (prevUsage < 0: none).
	prevUsage float64
	prevAdmit int
	// bound is what held the last tick's admissions back.
	bound Bound
	// prevActive is the active visitors of the last tick.
	prevActive float64
	// calm counts the ticks in a row at which the origin answered at its
	// baseline.
	calm int
	// tokens is the max_new_per_minute bucket as of refilled (-1: full,
	// not yet used).
	tokens   float64
	refilled time.Time
}

// NewController returns a controller with cfg's zero fields set to their
// defaults; visitorsPerSeat bounds usage by the remaining inventory
// (DefaultVisitorsPerSeat when ≤ 0).
func NewController(cfg ControllerConfig, visitorsPerSeat float64) *Controller {
	cfg, visitorsPerSeat = controllerDefaults(cfg, visitorsPerSeat)
	return &Controller{
		cfg:       cfg,
		perSeat:   visitorsPerSeat,
		drift:     -math.Expm1(-float64(cfg.Tick) / float64(ctlIdleDrift)),
		limit:     float64(cfg.InitialActive),
		target:    float64(cfg.InitialActive),
		base:      newCtlExtreme(ctlBaseWindow, 12, false),
		base95:    newCtlExtreme(ctlBaseWindow, 12, false),
		capLong:   newCtlExtreme(ctlCapLong, 10, true),
		prevUsage: -1,
		tokens:    -1,
	}
}

// Reconfigure installs a new configuration (defaults filled in as by
// NewController) and keeps everything measured: the baselines, the
// capacity, the limit and the target (raised to the new MinActive if
// below it). InitialActive only matters at a start, so a change of it
// does nothing to a running controller.
func (c *Controller) Reconfigure(cfg ControllerConfig, visitorsPerSeat float64) {
	c.cfg, c.perSeat = controllerDefaults(cfg, visitorsPerSeat)
	c.drift = -math.Expm1(-float64(c.cfg.Tick) / float64(ctlIdleDrift))
	c.limit = max(c.limit, float64(c.cfg.MinActive))
	c.target = max(c.target, float64(c.cfg.MinActive))
}

// controllerDefaults fills a controller configuration's zero fields.
func controllerDefaults(cfg ControllerConfig, visitorsPerSeat float64) (ControllerConfig, float64) {
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
	return cfg, visitorsPerSeat
}

// Step runs one tick: it updates the target and the limit from the
// measurements and decides how many visitors to let in.
//
// Usage, what occupies the limit, is the active visitors plus those on
// their way: Arriving less the no-shows expected among ArrivingOffered
// (without ArrivingKnown: Pending × (1 − NoShowRate), but no more than
// the recent admissions leave expected).
//
// The limit stays within [MinActive, Caps.MaxActive]. The room is the
// limit less usage, bounded by MaxNewPerMinute and by the inventory
// (usage + room ≤ Remaining × visitorsPerSeat); 0 when sold out.
// MaxNewPerMinute is a ceiling, not a pace to wait for: a token bucket
// refilled continuously at MaxNewPerMinute/60 a second, holding one
// tick's share (at least one visitor) and full at the start, so that an
// idle site lets its first visitor in at the first tick and a busy one
// admits the even share every tick; and never more than MaxNewPerMinute
// in any minute. Admit is the room, up to
// Waiting; with PassThrough, Slots is what is left of it.
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
	active := float64(max(in.Active, 0))
	usage := active + c.arriving(in) + float64(taken)
	d := c.adjust(in, active, usage, first)
	out := ControllerOutput{Limit: int(c.limit)}
	d.At, d.Limit = now, out.Limit
	if in.RemainingKnown && in.Remaining <= 0 {
		out.SoldOut = true
		d.Reason = ReasonSoldOut
		out.Decision = d
		c.prevUsage, c.prevAdmit, c.bound = usage, 0, BoundInventory
		return out
	}
	c.usageAvg.add(usage, ctlUsageSmooth)
	// Against max_active every visitor who may still come counts.
	capUsage := max(usage, active+float64(max(in.Unarrived, 0))+float64(taken))
	room, bound := c.room(in, usage, capUsage)
	if p := c.pace(in.Now); p < room {
		room = p
	}
	if d.Reason == ReasonErrors || d.Reason == ReasonLatency {
		// The origin is failing its targets: nobody comes in at this
		// tick, whatever room the transit keeps for visitors on their
		// way (visitors let in but not seen yet may as well be no-shows
		// as on their way); min_active, the floor the operator set, is
		// still let in.
		room = min(room, int(min(max(0, float64(c.cfg.MinActive)-usage), math.MaxInt32)))
	}
	out.Admit = room
	if in.WaitingKnown && max(in.Waiting, 0) < room {
		out.Admit, bound = max(in.Waiting, 0), BoundWaiting
	}
	if in.PassThrough {
		out.Slots = room - out.Admit
	}
	d.Admit, d.Slots, d.Bound = out.Admit, out.Slots, bound
	out.Decision = d
	c.hist.add(now, out.Admit)
	if in.Caps.MaxNewPerMinute > 0 {
		c.tokens -= float64(out.Admit) // Slots are charged when taken
	}
	c.prevUsage, c.prevAdmit, c.bound = usage, out.Admit+taken, bound
	return out
}

// refill brings the max_new_per_minute bucket up to now and charges it
// with the slots taken since the last tick.
func (c *Controller) refill(now time.Time, perMinute, taken int) {
	if perMinute <= 0 {
		c.tokens, c.refilled = -1, now
		return
	}
	// One tick's share (at least one visitor): a fixed rate is an even
	// pace, never a burst and then a pause at the minute's end.
	burst := max(1, float64(perMinute)*float64(c.cfg.Tick)/float64(time.Minute))
	if c.tokens < 0 || c.refilled.IsZero() {
		c.tokens = burst
	} else if dt := now.Sub(c.refilled); dt > 0 {
		c.tokens += float64(perMinute) * dt.Minutes()
	}
	c.tokens = max(0, min(c.tokens, burst)-float64(taken))
	c.refilled = now
}

// arriving is how many visitors reached are expected to arrive at the
// origin soon.
func (c *Controller) arriving(in ControllerInput) float64 {
	ns := in.NoShowRate
	if !(ns > 0) {
		ns = 0
	}
	ns = min(ns, ctlMaxNoShow)
	if in.ArrivingKnown {
		if in.LatelyOffered >= ctlLatelyMin {
			ns = min(ctlMaxNoShow, float64(max(in.Lately, 0))/float64(in.LatelyOffered))
		}
		return max(0, float64(max(in.Arriving, 0))-ns*float64(max(in.ArrivingOffered, 0)))
	}
	pending := float64(max(in.Pending, 0)) * (1 - ns)
	if !in.Now.Add(-ctlClaimCovered).Before(c.started) {
		pending = min(pending, c.hist.expected(in.Now))
	}
	return pending
}

// measured returns the tick's measurements, merged with the ticks before
// it while they rest on fewer than ctlMinAnswered answers, and whether
// they are enough to judge the latency on.
func (c *Controller) measured(m Measurements) (Measurements, bool) {
	if m.Answered <= 0 && m.LatencyP95 > 0 && m.RequestRate > 0 {
		// A meter that does not count its answers: a tick's requests.
		m.Answered = m.RequestRate * c.cfg.Tick.Seconds() * (1 - min(max(m.ErrorRate, 0), 1))
	}
	if m.LatencyMean <= 0 {
		m.LatencyMean = m.LatencyP50
	}
	if c.recent.len() == ctlMergeTicks {
		c.recent.pop()
	}
	c.recent.push(m)
	if m.Answered >= ctlMinAnswered {
		return m, true
	}
	var out Measurements
	var n, rate, errs, mean, p95 float64
	ticks := 0
	for i := c.recent.len() - 1; i >= 0 && n < ctlMinAnswered; i-- {
		r := c.recent.at(i)
		ticks++
		rate += r.RequestRate
		errs += r.ErrorRate * r.RequestRate
		if r.Answered > 0 {
			n += r.Answered
			mean += r.Answered * float64(r.LatencyMean)
			p95 += r.Answered * float64(r.LatencyP95)
		}
	}
	out = m
	out.RequestRate = rate / float64(ticks)
	if rate > 0 {
		out.ErrorRate = errs / rate
	}
	if n > 0 {
		out.LatencyMean, out.LatencyP95, out.Answered = time.Duration(mean/n), time.Duration(p95/n), n
	}
	// A site whose visitors think for seconds between pages may never
	// make ctlMinAnswered in ctlMergeTicks: a few answers over them
	// still tell a calm origin from a queueing one.
	return out, n >= ctlMinAnswered || (ticks >= ctlMergeTicks && n >= ctlFewAnswered) ||
		(n > 0 && out.ErrorRate > c.cfg.TargetErrorRate)
}

// adjust moves the target and the limit (see Controller) and returns the
// decision's reason and figures.
func (c *Controller) adjust(in ControllerInput, active, usage float64, first bool) Decision {
	m, ok := c.measured(in.Measurements)
	d := Decision{Usage: usage, Active: active, Pending: usage - active, Latency: m.LatencyMean, P95: m.LatencyP95,
		RequestRate: m.RequestRate, ErrorRate: m.ErrorRate}
	if c.prevUsage >= 0 {
		c.departs.add(max(0, c.prevUsage+float64(c.prevAdmit)-usage), ctlDepartSmooth)
		c.reqs.add(max(0, in.RequestRate), ctlDepartSmooth)
	}
	defer func() { c.prevActive = active }()
	binding := usage >= ctlBinding*c.limit || c.bound == BoundNone
	prev := c.target
	switch {
	case first:
		d.Reason = ReasonStart
	case !ok:
		d.Reason = ReasonNoData
		if !binding {
			d.Reason = ReasonIdle
			c.idle(usage)
		}
	default:
		d.Reason = c.aim(m, active, usage-active, binding, in.Now)
		if (d.Reason == ReasonSteady || d.Reason == ReasonProbe || d.Reason == ReasonQueueing) && c.tail(m, prev, in.Now) {
			d.Reason = ReasonTail
		}
	}
	if cap, ok := c.capacityNow(in.Now); ok {
		d.Capacity = cap
	} else if cap, ok := c.capLong.get(in.Now); ok {
		d.Capacity = cap
	}
	if b, ok := c.baseline(in.Now); ok {
		d.BaseLatency = time.Duration(b * float64(time.Second))
	}
	if c.target < prev {
		c.target = max(c.target, prev*c.cfg.Decrease) // one tick's cut at most
	}
	if math.IsNaN(c.target) || math.IsInf(c.target, 0) {
		c.target = float64(c.cfg.InitialActive)
	}
	c.target = max(c.target, float64(c.cfg.MinActive))
	if m := in.Caps.MaxActive; m > 0 {
		c.target = min(c.target, float64(m))
	}
	// The limit is on usage: those who will leave before the visitors on
	// their way arrive make room for them. How much is learnt from the
	// active visitors falling short of the target (or above it) while
	// the limit binds.
	if ok && binding && !first {
		short := max(-ctlTransitStep*c.target, min(ctlTransitStep*c.target, c.target-active))
		c.transit += ctlTransitGain * short
	}
	c.transit = min(max(c.transit, 0), 0.5*c.target)
	c.limit = c.target + c.transit
	d.Target, d.Think = c.target, time.Duration(c.think.v*float64(time.Second))
	if m := in.Caps.MaxActive; m > 0 {
		c.limit = min(c.limit, float64(m))
	}
	return d
}

// aim sets the target from measurements good enough to judge by and
// returns why.
func (c *Controller) aim(m Measurements, active, coming float64, binding bool, now time.Time) Reason {
	lat := m.LatencyMean.Seconds()
	if lat <= 0 {
		lat = m.LatencyP50.Seconds()
	}
	good := m.RequestRate * (1 - min(max(m.ErrorRate, 0), 1))
	if m.ErrorRate <= c.cfg.TargetErrorRate && lat > 0 {
		c.base.note(now, lat)
		if p := m.LatencyP95.Seconds(); p > 0 {
			c.base95.note(now, p)
		}
	}
	base, known := c.baseline(now)
	if !(m.RequestRate > 0) || (lat <= 0 && m.ErrorRate <= c.cfg.TargetErrorRate) {
		return ReasonNoData
	}
	if !known {
		// Failing from the first tick: no answer has been calm enough to
		// be a baseline, so the latency seen stands in for it (the cut
		// below is by the errors).
		base = max(lat, 1e-3)
	}
	if active >= ctlThinkMin && c.prevActive > 0 && math.Abs(active-c.prevActive) <= ctlThinkSteady*c.prevActive {
		// Little's law holds for a steady population: while visitors
		// arrive or leave in numbers, the window's requests are not
		// those of the visitors counted.
		c.think.add(max(0, active/m.RequestRate-lat), ctlSmooth)
	}
	aimAt := base * (1 + ctlAllowance)
	if lat <= base*(1+ctlProbeBelow) {
		c.calm++
	} else {
		c.calm = 0
	}
	model := good * (c.think.v + aimAt) // Little's law at the origin's capacity
	switch {
	case m.ErrorRate > c.cfg.TargetErrorRate:
		c.noteCapacity(now, good)
		c.queued = true
		c.target = min(model, active*(1-m.ErrorRate))
		return ReasonErrors
	case m.LatencyP95 > c.cfg.TargetP95:
		c.queued = true
		c.target = min(model, active*float64(c.cfg.TargetP95)/float64(m.LatencyP95))
		return ReasonLatency
	case !known:
		return ReasonNoData
	case lat > base*(1+ctlQueueAbove):
		c.noteCapacity(now, good)
		c.queued = true
		c.follow(model)
		return ReasonQueueing
	case !binding:
		c.idle(active)
		return ReasonIdle
	case lat <= base*(1+ctlProbeBelow) && (c.calm >= ctlCalmTicks || !c.queued):
		// Nothing has waited at the origin for a while: it may take more
		// than the active visitors, so the target grows with them. A
		// target above them (they are between two waves) is not refuted
		// by an origin that is not queueing, so it stays.
		prev := c.target
		if !c.queued && coming > ctlRoundShare*active {
			// The slow start doubles per round: the last doubling is
			// still on its way, and the origin has not felt it yet.
			return ReasonProbe
		}
		c.target = max(c.target, model, active*c.gain(active, c.think.v+aimAt, now))
		if c.cfg.Increase > 0 {
			c.target = min(c.target, prev+float64(c.cfg.Increase))
		}
		return ReasonProbe
	}
	if lat <= aimAt && model < c.target {
		// Under the target latency the origin serves what its visitors
		// ask, not what it could: a lower model is demand, not capacity.
		return ReasonSteady
	}
	c.follow(model)
	return ReasonSteady
}

// baseline is the origin's unloaded mean latency (seconds): the least of
// the last ctlBaseWindow, except that it rises only slowly (time constant
// ctlBaseCreep). An origin kept overloaded for longer than the window (a
// slow start that overshot, visitors who stay for minutes) would
// otherwise make its overloaded latency the baseline; one that got
// slower for good is followed within minutes.
func (c *Controller) baseline(now time.Time) (float64, bool) {
	b, ok := c.base.get(now)
	switch {
	case !ok && c.baseNow > 0:
		return c.baseNow, true
	case !ok:
		return 0, false
	case c.baseNow <= 0 || b <= c.baseNow:
		c.baseNow = b
	case now.After(c.baseAt):
		c.baseNow += (b - c.baseNow) * -math.Expm1(-float64(now.Sub(c.baseAt))/float64(ctlBaseCreep))
	}
	c.baseAt = now
	return c.baseNow, true
}

// follow moves the target towards the model: at once when the model is
// well below it (the origin lost capacity), else halfway a tick, so that
// a second's measurement noise does not swing the limit.
func (c *Controller) follow(model float64) {
	if model < c.target*ctlDropAt {
		c.target = model
		return
	}
	c.target += ctlFollow * (model - c.target)
}

// tail eases the target while the origin's p95 is near twice its
// baseline p95 although its mean is not: a share of the requests waits a
// whole service time, which is what visitors feel. It reports whether it
// did.
func (c *Controller) tail(m Measurements, prev float64, now time.Time) bool {
	b95, ok := c.base95.get(now)
	if !ok || m.LatencyP95.Seconds() <= ctlTailGuard*b95 || m.LatencyP95.Seconds()-b95 < ctlTailFloor.Seconds() {
		return false
	}
	c.target = min(c.target, prev*ctlTailEase)
	return true
}

// noteCapacity notes what the origin served while a line waited at it.
func (c *Controller) noteCapacity(now time.Time, good float64) {
	c.capLong.note(now, good)
	c.capNow, c.capAt = good, now
}

// capacityNow is what the origin served the last time it queued, if
// that was within ctlCapRecent.
func (c *Controller) capacityNow(now time.Time) (float64, bool) {
	if c.capAt.IsZero() || now.Sub(c.capAt) > ctlCapRecent {
		return 0, false
	}
	return c.capNow, true
}

// pace is how many visitors to let in at this tick at most: as many as
// leave a tick (at the origin's capacity once it is known: what it
// serves a second over the requests a visitor makes), plus the room under
// the limit, against the smoothed usage, spread over ctlPaceHorizon ticks.
func (c *Controller) pace(now time.Time) int {
	rate := max(0, c.departs.v)
	if cap, ok := c.capacityNow(now); ok && c.departs.v > 0 && c.reqs.v > 0 {
		rate = cap / (c.reqs.v / c.departs.v)
	}
	horizon := float64(ctlPaceHorizon)
	if !c.departs.set || c.departs.v == 0 {
		horizon = 1 // nobody has left yet: the first visitors go in at once
	}
	p := rate + (c.limit-c.usageAvg.v)/horizon
	if !(p > 0) {
		return 0
	}
	return int(math.Ceil(min(p, math.MaxInt32)))
}

// idle drifts a target that is not in use down towards used/ctlBinding
// (see ctlIdleDrift).
func (c *Controller) idle(used float64) {
	c.target -= (c.target - used/ctlBinding) * c.drift
}

// gain is how much the active visitors may grow in a round of probing;
// cycle is a visitor's seconds per request at the target latency.
func (c *Controller) gain(active, cycle float64, now time.Time) float64 {
	if !c.queued {
		return ctlStartGain
	}
	if cap, ok := c.capLong.get(now); ok && active < ctlReturnBelow*cap*cycle {
		return ctlReturnGain
	}
	return ctlProbeGain
}

// room is how many new visitors fit at this tick, and what bounded it
// below what the controller's own limit leaves.
func (c *Controller) room(in ControllerInput, usage, capUsage float64) (int, Bound) {
	// The pace keeps admissions even; the limit bounds them only past
	// ctlSlack of itself, so that a wave of visitors inside does not
	// stop admission for a tick and make the next wave.
	room, bound := math.Floor(c.limit*(1+ctlSlack)-usage), BoundNone
	if m := in.Caps.MaxActive; m > 0 && float64(m)-capUsage <= room {
		room, bound = math.Floor(float64(m)-capUsage), BoundMaxActive
	}
	if mn := in.Caps.MaxNewPerMinute; mn > 0 {
		// The bucket never holds more than the last minute leaves: once
		// the minute's ceiling binds, the pace resumes evenly instead of
		// in a burst when the window moves on.
		last := max(in.AdmittedLastMinute, c.hist.sum())
		c.tokens = min(c.tokens, float64(max(0, mn-last)))
		if t := math.Floor(c.tokens); t < room {
			room, bound = t, BoundPerMinute
		}
	}
	if in.RemainingKnown {
		if r := math.Floor(float64(in.Remaining)*c.perSeat - usage); r < room {
			room, bound = r, BoundInventory
		}
	}
	if !(room > 0) {
		return 0, bound
	}
	return int(min(room, math.MaxInt32)), bound
}

// ctlState is the controller's state as MarshalState encodes it. Version
// 1 (the AIMD controller's) is read for its limit, start, admissions and
// bucket.
type ctlState struct {
	V       int        `json:"v"`
	Limit   float64    `json:"limit"`
	Target  float64    `json:"target,omitempty"`
	Queued  bool       `json:"queued,omitempty"`
	Started int64      `json:"started,omitempty"` // Unix ns
	Admits  [][2]int64 `json:"admits,omitempty"`  // [Unix ns, Admit], oldest first
	// BaseLatency (seconds) and Capacity (requests a second) are the
	// windowed extremes as of Saved (Unix ns); Think (seconds), Leaving
	// and LetIn (visitors a tick) the smoothed figures.
	BaseLatency float64 `json:"base_latency,omitempty"`
	Capacity    float64 `json:"capacity,omitempty"`
	Saved       int64   `json:"saved,omitempty"`
	Think       float64 `json:"think,omitempty"`
	Transit     float64 `json:"transit,omitempty"`
	// Departs (visitors a tick), Reqs (requests a second) and Usage are
	// the smoothed figures the pace is measured by.
	Departs float64 `json:"departs,omitempty"`
	Reqs    float64 `json:"reqs,omitempty"`
	Usage   float64 `json:"usage,omitempty"`
	// Tokens and Refilled are the max_new_per_minute bucket (absent:
	// full).
	Tokens   *float64 `json:"tokens,omitempty"`
	Refilled int64    `json:"refilled,omitempty"` // Unix ns
}

// MarshalState encodes the controller's state (JSON) so that a new leader
// carries on where this one stopped.
func (c *Controller) MarshalState() []byte {
	s := ctlState{V: ctlStateVersion, Limit: c.limit, Target: c.target, Queued: c.queued,
		Think: c.think.v, Transit: c.transit, Departs: c.departs.v, Reqs: c.reqs.v, Usage: c.usageAvg.v}
	if !c.started.IsZero() {
		s.Started = c.started.UnixNano()
	}
	if t := c.lastTick(); !t.IsZero() {
		s.Saved = t.UnixNano()
		s.BaseLatency = c.baseNow
		s.Capacity, _ = c.capLong.get(t)
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

// lastTick is the time of the last tick (zero: none yet): the bucket's
// refill time or the last admission, whichever is later, else the start.
func (c *Controller) lastTick() time.Time {
	t := c.started
	if c.refilled.After(t) {
		t = c.refilled
	}
	if n := c.hist.recs.len(); n > 0 {
		if a := time.Unix(0, c.hist.recs.at(n-1).at); a.After(t) {
			t = a
		}
	}
	return t
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
	if s.V != ctlStateVersion && s.V != 1 {
		return fmt.Errorf("%w: version %d", errControllerState, s.V)
	}
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if !(v >= 0) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	if !(s.Limit > 0) || !finite(s.Limit, s.Target, s.BaseLatency, s.Capacity, s.Think, s.Transit, s.Departs, s.Reqs, s.Usage) ||
		s.Saved < 0 || (s.Tokens != nil && (!finite(*s.Tokens) || s.Refilled <= 0)) {
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
	c.target = c.limit
	if s.Target > 0 {
		c.target = max(s.Target, float64(c.cfg.MinActive))
	}
	c.queued = s.Queued
	c.started = time.Time{}
	if s.Started != 0 {
		c.started = time.Unix(0, s.Started)
	}
	c.base.reset()
	c.baseNow, c.baseAt = 0, time.Time{}
	c.base95.reset()
	c.capLong.reset()
	c.capNow, c.capAt = 0, time.Time{}
	if s.Saved > 0 {
		saved := time.Unix(0, s.Saved)
		if s.BaseLatency > 0 {
			c.base.note(saved, s.BaseLatency)
			c.baseNow, c.baseAt = s.BaseLatency, saved
		}
		if s.Capacity > 0 {
			c.capLong.note(saved, s.Capacity)
		}
	}
	c.think, c.transit = ctlEWMA{}, 0
	c.departs, c.reqs, c.usageAvg = ctlEWMA{}, ctlEWMA{}, ctlEWMA{}
	if s.V == ctlStateVersion {
		c.think, c.transit = ctlEWMA{s.Think, true}, s.Transit
		c.departs, c.reqs, c.usageAvg = ctlEWMA{s.Departs, s.Departs > 0}, ctlEWMA{s.Reqs, s.Reqs > 0}, ctlEWMA{s.Usage, s.Usage > 0}
	}
	c.recent.clear()
	c.prevUsage, c.prevAdmit, c.bound = -1, 0, BoundNone
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
