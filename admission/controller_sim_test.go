// Fixtures of the controller's tests: a small deterministic origin, a run
// that drives a Controller against it one tick a second the way the
// engine does, steady measurements and the simulated clock. The cases
// are in controller_test.go.

package admission

import (
	"math"
	"time"
)

// ctlEpoch is the simulated clock's origin in the controller's tests.
var ctlEpoch = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// simOrigin is a small deterministic origin for the controller's tests.
// It serves up to perMin visitor journeys a minute; a journey keeps a
// visitor active for journey seconds while the origin keeps up, so its
// capacity is perMin·journey/60 active visitors. Past capacity its p95
// latency rises steeply (300 ms up to capacity, then +5 s per 100 % of
// overload: 800 ms at 10 % over) and beyond 30 % over, requests start
// failing. Completions are capped at perMin, so an overloaded origin
// drains slowly.
type simOrigin struct {
	perMin  float64
	journey float64 // seconds
	active  float64
}

func (o *simOrigin) capacity() float64 { return o.perMin * o.journey / 60 }

// load is the active visitors as a share of the capacity.
func (o *simOrigin) load() float64 { return o.active / o.capacity() }

// second runs one second of the origin and returns its measurements.
func (o *simOrigin) second() Measurements {
	rho := o.load()
	p95 := 300 * time.Millisecond
	if rho > 1 {
		p95 += time.Duration((rho - 1) * 5 * float64(time.Second))
	}
	errRate := 0.0
	if rho > 1.3 {
		errRate = min(1, (rho-1.3)*0.5)
	}
	m := Measurements{RequestRate: 2 * o.active, LatencyP50: p95 / 3, LatencyP95: p95, ErrorRate: errRate}
	done := min(o.active/o.journey, o.perMin/60)
	o.active -= done
	m.Completions = int(math.Round(done))
	return m
}

// simCohort is the visitors reached at one tick who are still pending.
type simCohort struct {
	tick           int
	shows, noShows float64
}

// simRun drives a controller against a simOrigin the way the engine
// does, one tick a second: of the visitors reached at a tick, those who
// come arrive claimDelay ticks later and the no-shows stay pending for
// grace ticks; the serving counter advances by Admit/(1−noShow); nobody
// is let in beyond the queue.
type simRun struct {
	ctl        *Controller
	origin     *simOrigin
	tick       int
	noShow     float64
	claimDelay int
	grace      int
	caps       Caps
	remaining  float64 // < 0: not linked to an inventory; visitors buy a seat each when done
	queue      float64 // visitors waiting (+Inf: always someone)
	cohorts    []simCohort
	admitted   []int // per tick, what was let in
	outs       []ControllerOutput
	counter    float64 // serving counter
	errSum     float64 // sum of the origin's error rates per tick
}

func newSimRun(cfg ControllerConfig, perMin float64) *simRun {
	return &simRun{ctl: NewController(cfg, 1.5), origin: &simOrigin{perMin: perMin, journey: 20},
		noShow: 0.2, claimDelay: 2, grace: 60, remaining: -1, queue: math.Inf(1)}
}

func (s *simRun) now() time.Time { return ctlEpoch.Add(time.Duration(s.tick) * time.Second) }

// pending is what the engine reports as pending; pendingShows the part of
// it who will come.
func (s *simRun) pending() (all, shows float64) {
	for _, c := range s.cohorts {
		all += c.shows + c.noShows
		shows += c.shows
	}
	return all, shows
}

// input is the controller's input at this tick, given the origin's
// measurements of the last second.
func (s *simRun) input(m Measurements) ControllerInput {
	m.Active = int(math.Round(s.origin.active))
	last := 0
	for i := max(0, len(s.admitted)-59); i < len(s.admitted); i++ {
		last += s.admitted[i]
	}
	all, _ := s.pending()
	in := ControllerInput{Now: s.now(), Measurements: m, Pending: int(math.Round(all)),
		NoShowRate: s.noShow, Caps: s.caps, AdmittedLastMinute: last}
	if s.remaining >= 0 {
		in.Remaining, in.RemainingKnown = int(s.remaining), true
	}
	return in
}

// step runs one tick and returns the controller's input and output.
func (s *simRun) step() (ControllerInput, ControllerOutput) {
	before := s.origin.active
	m := s.origin.second()
	s.errSum += m.ErrorRate
	if s.remaining >= 0 {
		s.remaining = max(0, s.remaining-(before-s.origin.active))
	}
	live := s.cohorts[:0]
	for _, c := range s.cohorts {
		if s.tick-c.tick >= s.claimDelay {
			s.origin.active += c.shows
			c.shows = 0
		}
		if s.tick-c.tick >= s.grace {
			c.noShows = 0
		}
		if c.shows+c.noShows > 0 {
			live = append(live, c)
		}
	}
	s.cohorts = live
	in := s.input(m)
	out := s.ctl.Step(in)
	n := min(float64(out.Admit), s.queue)
	s.queue -= n
	s.admitted = append(s.admitted, int(n))
	s.outs = append(s.outs, out)
	if n > 0 {
		s.cohorts = append(s.cohorts, simCohort{tick: s.tick, shows: n, noShows: n * s.noShow / (1 - s.noShow)})
		s.counter += n / (1 - s.noShow)
	}
	s.tick++
	return in, out
}

// perMinute is the mean admission per minute over ticks [from, to).
func (s *simRun) perMinute(from, to int) float64 {
	sum := 0
	for _, n := range s.admitted[from:to] {
		sum += n
	}
	return float64(sum) * 60 / float64(to-from)
}

// healthy are measurements of an origin well within its targets.
func healthy(active int) Measurements {
	return Measurements{RequestRate: float64(2 * active), LatencyP50: 100 * time.Millisecond,
		LatencyP95: 300 * time.Millisecond, Active: active}
}

func at(tick int) time.Time { return ctlEpoch.Add(time.Duration(tick) * time.Second) }
