// Fixtures of the controller's tests: a small deterministic closed-loop
// origin, a run that drives a Controller against it one tick a second the
// way the engine's regulate does, and the simulated clock. The cases are
// in controller_test.go.

package admission

import (
	"math"
	"time"
)

// ctlEpoch is the simulated clock's origin in the controller's tests.
var ctlEpoch = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// simOrigin is a deterministic closed-loop origin, the model the
// controller assumes. Each active visitor cycles: a request (its latency)
// then think seconds, and leaves after journey requests answered (a
// completion). The origin serves at most capRate requests a second, each
// in base seconds while it keeps up. Below capacity every request takes
// base; above it the visitors' requests queue, and by Little's law the
// mean latency is active/capRate − think (the origin serves capRate). The
// p95 is simTail × the mean (a little above it). Past queueMax waiting
// requests the origin refuses the rest at once (a 503 the meter counts
// as an error, not as answered), and those visitors try again after
// thinking.
type simOrigin struct {
	capRate float64 // requests a second at most
	base    float64 // seconds, the unloaded latency
	think   float64 // seconds between a visitor's answer and their next request
	journey float64 // requests a visitor makes before leaving
	// queueMax is how many requests may wait at the origin before it
	// refuses more (0: 2 s of its capacity).
	queueMax float64
	active   float64
	// done is the fraction of a departure carried to the next second, so
	// that Completions adds up to the departures.
	done float64
	// served and offered sum the good requests served and the capacity
	// offered per second (utilisation is their ratio), errs the error
	// rates over seconds.
	served, offered, errs float64
	seconds               int
}

// simTail is the ratio of the origin's p95 to its mean latency.
const simTail = 1.2

// activeAt is the active visitors that keep the origin at its capacity
// and base latency.
func (o *simOrigin) activeAt() float64 { return o.capRate * (o.think + o.base) }

// second runs one second of the origin with its current active visitors
// and returns what the proxy's meter would measure over it.
func (o *simOrigin) second() Measurements {
	a := max(o.active, 0)
	lat, rate, errRate := o.base, a/(o.base+o.think), 0.0
	if rate > o.capRate {
		// A line: the origin serves its capacity and the visitors not
		// thinking wait in it.
		rate, lat = o.capRate, a/o.capRate-o.think
		qmax := o.queueMax
		if qmax <= 0 {
			qmax = 2 * o.capRate
		}
		if waiting := o.capRate * (lat - o.base); waiting > qmax {
			// The requests past the bound are refused at once: those
			// visitors think again without waiting, and the share of
			// refused requests is what it takes to keep the line at
			// the bound. Visitors are in the line or thinking:
			// a = capRate × lat + (capRate + refused) × think.
			lat = o.base + qmax/o.capRate
			refused := o.capRate // with no think time they hammer: say as many again
			if o.think > 0 {
				refused = (a-o.capRate*lat)/o.think - o.capRate
			}
			errRate = min(0.95, max(0, refused)/(max(0, refused)+o.capRate))
		}
	}
	good := rate
	m := Measurements{
		RequestRate: good / (1 - errRate),
		LatencyMean: secs(lat),
		LatencyP50:  secs(lat * 0.95),
		LatencyP95:  secs(lat * simTail),
		Answered:    good,
		ErrorRate:   errRate,
		InFlight:    int(math.Round(good * lat)),
		Active:      int(math.Round(a)),
	}
	left := min(a, good/o.journey+o.done)
	m.Completions = int(left)
	o.done = left - float64(m.Completions)
	o.active = a - float64(m.Completions)
	o.served += good
	o.offered += o.capRate
	o.errs += errRate
	o.seconds++
	return m
}

// resetTally forgets the utilisation and errors.
func (o *simOrigin) resetTally() { o.served, o.offered, o.errs, o.seconds = 0, 0, 0, 0 }

// utilisation is the share of the capacity offered that was served since
// the last resetTally.
func (o *simOrigin) utilisation() float64 { return o.served / o.offered }

// errorRate is the mean error rate since the last resetTally.
func (o *simOrigin) errorRate() float64 { return o.errs / float64(o.seconds) }

// simCohort is the numbers reached (offered) at one tick.
type simCohort struct {
	tick    int
	offered float64 // numbers reached
	shows   float64 // of them, visitors who will come and have not yet
	came    float64 // of them, visitors who came
}

// simRun drives a controller against a simOrigin the way the engine's
// regulate does, one tick a second. At a tick Admit visitors are let in:
// the serving counter advances by Admit/(1 − the measured no-show rate)
// numbers, of which a share noShow never comes; those who come arrive
// claimDelay ticks later. A number counts as pending for grace ticks
// unless its visitor came; the no-show rate is measured, as the engine
// does, over the numbers offered between grace and grace + 60 s ago (at
// least 20 of them). Nobody is let in beyond the queue.
type simRun struct {
	ctl        *Controller
	origin     *simOrigin
	tick       int
	noShow     float64
	claimDelay int
	grace      int
	caps       Caps
	remaining  float64 // < 0: not linked to an inventory; a departure buys a seat
	queue      float64 // numbers waiting (+Inf: always someone)
	cohorts    []simCohort
	admitted   []int // per tick, the Admit let in (expected arrivals)
	outs       []ControllerOutput
	ins        []ControllerInput
	counter    float64 // serving counter
}

// newSimRun returns a run of a controller with cfg against an origin
// serving capRate requests a second at 100 ms, with visitors thinking 2 s
// between 10 requests (an origin full at capRate × 2.1 active visitors),
// 20 % no-shows who stay pending for a minute, claims 2 ticks after the
// reach and a queue that never empties.
func newSimRun(cfg ControllerConfig, capRate float64) *simRun {
	return &simRun{ctl: NewController(cfg, 1.5),
		origin: &simOrigin{capRate: capRate, base: 0.1, think: 2, journey: 10},
		noShow: 0.2, claimDelay: 2, grace: 60, remaining: -1, queue: math.Inf(1)}
}

func (s *simRun) now() time.Time { return ctlEpoch.Add(time.Duration(s.tick) * time.Second) }

// measuredNoShow is the no-show rate as the engine measures it.
func (s *simRun) measuredNoShow() float64 {
	offered, came := 0.0, 0.0
	for _, c := range s.cohorts {
		if age := s.tick - c.tick; age > s.grace && age <= s.grace+60 {
			offered += c.offered
			came += c.came
		}
	}
	if offered < 20 {
		return 0
	}
	return (offered - came) / offered
}

// input is the controller's input at this tick, given the origin's
// measurements of the last second: as regulate builds it.
func (s *simRun) input(m Measurements) ControllerInput {
	last := 0
	for i := max(0, len(s.admitted)-59); i < len(s.admitted); i++ {
		last += s.admitted[i]
	}
	in := ControllerInput{Now: s.now(), Measurements: m, NoShowRate: s.measuredNoShow(), Caps: s.caps,
		AdmittedLastMinute: last, Waiting: int(min(s.queue, math.MaxInt32)), WaitingKnown: true, ArrivingKnown: true}
	pending, arriving, offered := 0.0, 0.0, 0.0
	for _, c := range s.cohorts {
		age := s.tick - c.tick
		if age > s.grace {
			continue
		}
		pending += c.offered - c.came
		if age <= int(ctlClaimSoon/time.Second) {
			arriving += c.offered - c.came
			offered += c.offered
		}
	}
	in.Pending, in.Arriving, in.ArrivingOffered = int(math.Round(pending)), int(math.Round(arriving)), int(math.Round(offered))
	if s.remaining >= 0 {
		in.Remaining, in.RemainingKnown = int(s.remaining), true
	}
	return in
}

// step runs one tick and returns the controller's input and output.
func (s *simRun) step() (ControllerInput, ControllerOutput) {
	m := s.origin.second()
	if s.remaining >= 0 {
		s.remaining = max(0, s.remaining-float64(m.Completions))
	}
	live := s.cohorts[:0]
	for _, c := range s.cohorts {
		if s.tick-c.tick >= s.claimDelay && c.shows > 0 {
			s.origin.active += c.shows
			c.came += c.shows
			c.shows = 0
		}
		if s.tick-c.tick <= s.grace+60 {
			live = append(live, c)
		}
	}
	s.cohorts = live
	// The meter counts a visitor as active from their first request, which
	// is how the engine learns they came: those who came at this tick are
	// active, not pending.
	m.Active = int(math.Round(s.origin.active))
	in := s.input(m)
	out := s.ctl.Step(in)
	n := float64(out.Admit)
	if out.Admit > in.Waiting {
		panic("simRun: the controller admitted more than are waiting")
	}
	numbers := min(math.Ceil(n/(1-min(in.NoShowRate, maxNoShowRate))), s.queue)
	s.queue -= numbers
	s.admitted = append(s.admitted, out.Admit)
	s.outs = append(s.outs, out)
	s.ins = append(s.ins, in)
	if numbers > 0 {
		s.cohorts = append(s.cohorts, simCohort{tick: s.tick, offered: numbers, shows: numbers * (1 - s.noShow)})
		s.counter += numbers
	}
	s.tick++
	return in, out
}

// run steps until tick n.
func (s *simRun) run(n int) {
	for s.tick < n {
		s.step()
	}
}

// coming is the visitors reached who will come and have not yet.
func (s *simRun) coming() float64 {
	n := 0.0
	for _, c := range s.cohorts {
		n += c.shows
	}
	return n
}

// perMinute is the mean admission per minute over ticks [from, to).
func (s *simRun) perMinute(from, to int) float64 {
	sum := 0
	for _, n := range s.admitted[from:to] {
		sum += n
	}
	return float64(sum) * 60 / float64(to-from)
}

func at(tick int) time.Time { return ctlEpoch.Add(time.Duration(tick) * time.Second) }
