// The controller benchmark (bench/controller) in simulated time: the same
// origin, crowd and proxy meter, the real admission engine.

package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/sim/figures"
)

// BenchConfig is one run of bench/controller's scenario: an origin of
// Capacity slots at a fixed Latency with a FIFO line of Queue and 503s
// past it, browned out to BrownFactor of its capacity from BrownStart to
// BrownEnd after the on-sale (T0); a crowd of Shoppers arriving evenly
// over Arrive from T0, each joining, polling its status at the refresh it
// is told, and once admitted loading Pages gated pages and the checkout
// one after the other (Think between them, a 503 retried after 1 s); a
// share NoShow takes its pass and never comes, LateShare of those come
// back Late after their admission. The waitroom is one event in mode
// always, as bench/controller configures `waitroom serve`: the controller
// (MaxNewPerMinute 0), or a fixed rate with the controller pinned out
// (see WithContender). IssueBench is the issue's scenario; Validate
// rejects what makes no sense. It is a plain value, safe to copy and to
// share between goroutines.
type BenchConfig struct {
	// Seed makes the run repeatable: the arrival jitter, the no-shows
	// and the engine's randomness come from it.
	Seed uint64

	Shoppers  int
	Arrive    time.Duration
	Pages     int
	Think     time.Duration
	NoShow    float64
	LateShare float64
	Late      time.Duration
	// Duration is how long the run lasts after T0; checkouts are
	// counted within it.
	Duration time.Duration

	Capacity    int
	Latency     time.Duration
	Queue       int
	BrownStart  time.Duration
	BrownEnd    time.Duration // equal to BrownStart: no brown-out
	BrownFactor float64

	// MaxNewPerMinute is events[].caps.max_new_per_minute (0: none).
	MaxNewPerMinute int
	// InitialActive and MinActive are events[].controller.initial_active
	// and min_active (0: the engine's default).
	InitialActive, MinActive int
	// NoShowGrace is events[].no_show_grace (0: the default).
	NoShowGrace time.Duration
	// Settle is what the figures leave out as not settled after the first
	// admission and after the restore.
	Settle time.Duration

	// Model holds what the real run adds to the scenario's own numbers.
	Model Model
}

// Model is what real HTTP on a real machine adds to the scenario: the
// client's round trips through the waitroom, the origin's overhead on
// top of its latency, and the phase of the engine's ticks and the meter's
// slots against the on-sale. MeasuredModel is what bench/controller's
// runs measured. It is a plain value.
type Model struct {
	// Room, Join and Status are a shopper's mean round trips for the room
	// page (the first gated request, before the join), the join and a
	// status poll. The engine sees a call halfway through its round trip.
	// Each round trip is drawn from an exponential distribution of its
	// mean.
	Room, Join, Status time.Duration
	// Page is what a gated page's round trip adds on average to the
	// origin's own time (client → proxy → origin and back), split evenly
	// either side; a 503's round trip is this alone. Under overload it
	// decides who takes a place freed in the origin's line: the shopper
	// just served sending their next page, or one retrying after a 503.
	Page time.Duration
	// FirstPage is the pause between the "admitted" status and the first
	// gated page.
	FirstPage time.Duration
	// Service is what a request holds a slot for beyond the latency (the
	// origin's timer overshoot). HandOff is the extra for a request that
	// waited in line: the real origin hands it the slot and wakes it, and
	// it holds the slot while the scheduler of a busy machine gets round
	// to running it.
	Service, HandOff time.Duration
	// StallRate and StallMean are the origin's stalls (a machine shared
	// with other work: CPU starvation, collector pauses): at StallRate a
	// second on average, the origin stops serving for an exponentially
	// distributed time of mean StallMean, its requests in service held
	// that much longer. 0: never.
	StallRate float64
	StallMean time.Duration
	// TickPhase is when in each second after T0 the engine ticks (the
	// real one ticks from its start, at some phase of the on-sale's
	// second); MeterLead is how long before a tick the meter's 1 s
	// slots begin (the meter is made a little before the engine runs).
	TickPhase, MeterLead time.Duration
}

// MeasuredModel is the model calibrated against bench/controller's real
// HTTP runs of the issue's scenario on 2026-11-26 (see TestCalibration):
// the crowd's round trips on loopback (join mean 1.6–4.7 ms; status p50
// 1.0–2.5 ms, mean 6–14 ms under load; a gated page 1–2 ms over the
// origin's own time, which the 503s of the fixed rates that overload the
// origin bear out: 5 ms would make 13–17 % more; the first page sent at
// once after "admitted"), the
// origin's time per request in seconds it was saturated (202.4–203.5 ms
// for 200 ms: a constant overshoot and, on a machine shared with other
// work, stalls that cost a second up to a quarter of its throughput, in
// about one second out of five), and the phase of the ticks (the first
// admissions came 0.5–0.7 s into a second).
var MeasuredModel = Model{
	Room: 3 * time.Millisecond, Join: 3 * time.Millisecond, Status: 5 * time.Millisecond,
	Page: 1500 * time.Microsecond, FirstPage: 0,
	Service: 500 * time.Microsecond, HandOff: 1500 * time.Microsecond, StallRate: 0.2, StallMean: 25 * time.Millisecond,
	TickPhase: 600 * time.Millisecond, MeterLead: 20 * time.Millisecond,
}

// IssueBench is issue 15's scenario, as `bench/controller -full` runs it:
// an origin of 20 slots at 200 ms (100 requests a second) with a line of
// 60, halved from 60 s to 120 s; 2000 shoppers arriving over 20 s, 7
// pages and a checkout each; runs of 180 s. The contender is the
// controller with its defaults (see WithContender for the others).
func IssueBench() BenchConfig {
	return BenchConfig{Seed: 15, Shoppers: 2000, Arrive: 20 * time.Second, Pages: 7, Late: time.Minute,
		Duration: 180 * time.Second, Capacity: 20, Latency: 200 * time.Millisecond, Queue: 60,
		BrownStart: 60 * time.Second, BrownEnd: 120 * time.Second, BrownFactor: 0.5,
		Settle: 20 * time.Second, Model: MeasuredModel}
}

// Contenders are the ways of admitting bench/controller compares, by
// name: the controller, the fixed rate that fills the origin, twice it
// and half it.
var Contenders = []string{"controller", "fixed", "fixed-high", "fixed-low"}

// PinnedActive is the controller's initial and minimum limit when a fixed
// rate is measured: far above what the crowd could fill, so that only
// max_new_per_minute binds.
const PinnedActive = 1_000_000

// RightRate is the fixed rate, visitors a minute, that fills the origin:
// its capacity in requests a second over the requests of a shopper,
// inflated for the no-shows.
func (c BenchConfig) RightRate() int {
	return int(math.Round(60 * float64(c.Capacity) / c.Latency.Seconds() / float64(c.Pages+1) / (1 - c.NoShow)))
}

// WithContender returns c set up for the contender of that name (one of
// Contenders): a fixed rate sets MaxNewPerMinute and pins the controller
// out (PinnedActive); the controller keeps c's InitialActive and
// MinActive, an InitialActive of at least 50 when only MinActive is set.
func (c BenchConfig) WithContender(name string) (BenchConfig, error) {
	right := c.RightRate()
	rate := map[string]int{"controller": 0, "fixed": right, "fixed-high": 2 * right, "fixed-low": max(1, right/2)}
	r, ok := rate[name]
	if !ok {
		return c, fmt.Errorf("sim: no contender %q (controller, fixed, fixed-high, fixed-low)", name)
	}
	c.MaxNewPerMinute = r
	if r > 0 {
		c.InitialActive, c.MinActive = PinnedActive, PinnedActive
	} else if c.MinActive > 0 && c.InitialActive == 0 {
		c.InitialActive = max(c.MinActive, 50)
	}
	return c, nil
}

// Reduced is the capacity during the brown-out (at least 1).
func (c BenchConfig) Reduced() int {
	return max(1, int(float64(c.Capacity)*c.BrownFactor+0.5))
}

// Scenario is what the figures of a run of c are measured against.
func (c BenchConfig) Scenario() figures.Scenario {
	return figures.Scenario{Capacity: c.Capacity, BaseMS: float64(c.Latency) / float64(time.Millisecond),
		BrownStart: int(c.BrownStart / time.Second), BrownEnd: int(c.BrownEnd / time.Second),
		Settle: int(c.Settle / time.Second), SettleAfterBrown: int(c.Settle / time.Second)}
}

// Validate reports the first setting that makes no sense.
func (c BenchConfig) Validate() error {
	switch {
	case !(c.NoShow >= 0 && c.NoShow < 1), !(c.LateShare >= 0 && c.LateShare <= 1):
		return fmt.Errorf("sim: the no-show share must be in [0, 1), the late share in [0, 1]")
	case !(c.BrownFactor > 0 && c.BrownFactor <= 1):
		return fmt.Errorf("sim: the brown-out factor must be in (0, 1]")
	case c.Capacity < 1 || c.Latency <= 0 || c.Shoppers < 1 || c.Duration <= 0:
		return fmt.Errorf("sim: capacity, latency, shoppers and duration must be positive")
	case c.Queue < 0 || c.Pages < 0 || c.Think < 0 || c.Arrive < 0 || c.Late < 0:
		return fmt.Errorf("sim: queue, pages, think, arrive and late must not be negative")
	}
	return nil
}

// BenchResult is what a run measured, as bench/controller reports it. It
// is not changed after RunBench returns it.
type BenchResult struct {
	Config BenchConfig
	// Rows are the run's seconds after T0.
	Rows []figures.Row
	// FirstAdmit and LastAdmit are when the first and the last shopper
	// was told "admitted", seconds after T0 (NaN: nobody was).
	FirstAdmit, LastAdmit float64
	Joined, Admitted      int
	Completions           int // checkouts within the run
	NoShows, LateBack     int
	Retries503            int
	Polls                 int // status polls
	Errors                int // engine errors a shopper gave up on
	// NoShowRate is the no-show rate the engine measured at the end.
	NoShowRate float64
	Elapsed    time.Duration
}

// Figures computes the run's figures.
func (r *BenchResult) Figures() figures.Figures {
	return r.Config.Scenario().Compute(r.Rows, r.FirstAdmit, r.LastAdmit, r.Completions)
}

// benchEvent is the event's id, as in bench/controller's configuration.
const benchEvent = "bench"

// benchRun is one run in progress.
type benchRun struct {
	cfg    BenchConfig
	ctx    context.Context
	loop   *eventLoop
	engine *admission.Engine
	meter  *MeterModel
	origin *slotOrigin
	rng    *rand.Rand // the crowd: arrivals, no-shows
	rtts   *rand.Rand // round trips
	res    *BenchResult
	err    error

	admitted, finished []int // per second after T0
	active             int   // shoppers between their pass and their checkout
	passes             int   // passes issued
}

// benchShopper is one shopper of the crowd.
type benchShopper struct {
	noShow, late bool
	ticket       admission.Ticket
	presence     MeterPresence
	// pass is the shopper's pass once minted; used tells whether the gate
	// has seen it (the proxy notes a pass's first use to the engine).
	pass *admission.Pass
	used bool
}

// RunBench runs c once and returns what it measured. The same config
// gives the same result. Runs share nothing: several may go at once.
func RunBench(c BenchConfig) (*BenchResult, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	loop := newEventLoop(t0)
	// The waitroom starts a few seconds before the on-sale; its meter's
	// slots and epochs count from then, its ticks follow each second.
	first := c.Model.TickPhase - 6*time.Second
	loop.set(first - c.Model.MeterLead)
	m := NewMeterModel(loop.time())
	ev := admission.EventConfig{ID: benchEvent, Mode: admission.ModeAlways, OnSaleAt: t0, NoShowGrace: c.NoShowGrace,
		Caps:       admission.Caps{MaxNewPerMinute: c.MaxNewPerMinute},
		Controller: admission.ControllerConfig{InitialActive: c.InitialActive, MinActive: c.MinActive}}
	engine, closeEngine, err := newEngine("", loop.clk, c.Seed, m, ev)
	if err != nil {
		return nil, err
	}
	defer closeEngine()
	r := &benchRun{cfg: c, ctx: context.Background(), loop: loop, engine: engine, meter: m,
		rng: rand.New(rand.NewPCG(c.Seed, 0xbe4c)), rtts: rand.New(rand.NewPCG(c.Seed, 0x0477)), res: &BenchResult{Config: c, FirstAdmit: math.NaN(), LastAdmit: math.NaN()}}
	st := &stalls{rate: c.Model.StallRate, mean: c.Model.StallMean, rng: rand.New(rand.NewPCG(c.Seed, 0x0519)), from: first}
	r.origin = newSlotOrigin(loop, c.Capacity, c.Queue, func(start time.Duration, queued bool) time.Duration {
		work := c.Latency + c.Model.Service
		if queued {
			work += c.Model.HandOff
		}
		return st.finish(start, work) - start
	})
	if c.BrownEnd > c.BrownStart {
		loop.at(c.BrownStart, func() { r.origin.setCapacity(c.Reduced()) })
		loop.at(c.BrownEnd, func() { r.origin.setCapacity(c.Capacity) })
	}
	for at := first; at <= c.Duration; at += time.Second {
		loop.at(at, r.tick)
	}
	secs := int(c.Duration / time.Second)
	sampled := make([]figures.Row, secs)
	for i := range secs {
		loop.at(time.Duration(i)*time.Second+500*time.Millisecond, func() { r.sample(&sampled[i]) })
	}
	for i := range c.Shoppers {
		at := time.Duration((float64(i) + r.rng.Float64()) / float64(c.Shoppers) * float64(c.Arrive))
		s := &benchShopper{}
		s.noShow = r.rng.Float64() < c.NoShow
		s.late = s.noShow && r.rng.Float64() < c.LateShare
		loop.at(at, func() { loop.after(r.rtt(c.Model.Room), func() { r.join(s) }) })
	}
	loop.run(c.Duration, func() bool { return r.err != nil })
	if r.err != nil {
		return nil, r.err
	}

	rows := r.origin.rows(secs)
	for i := range rows {
		rows[i].Active, rows[i].Limit, rows[i].Serving, rows[i].Passes =
			sampled[i].Active, sampled[i].Limit, sampled[i].Serving, sampled[i].Passes
		if i < len(r.admitted) {
			rows[i].Admitted = r.admitted[i]
		}
		if i < len(r.finished) {
			rows[i].Finished = r.finished[i]
		}
	}
	r.res.Rows = rows
	r.res.NoShowRate = engine.Figures(benchEvent).NoShowRate
	r.res.Elapsed = time.Since(started)
	return r.res, nil
}

// tick is one of the engine's ticks, as `waitroom serve` runs them.
func (r *benchRun) tick() {
	if err := r.engine.Tick(r.ctx); err != nil {
		r.err = fmt.Errorf("sim: tick at %s: %w", r.loop.now, err)
	}
}

// sample is what bench/controller reads mid-second: the crowd's active
// shoppers and, from /metrics, the limit, the serving counter and the
// passes issued.
func (r *benchRun) sample(row *figures.Row) {
	f := r.engine.Figures(benchEvent)
	row.Active, row.Limit = r.active, float64(f.Limit)
	row.Serving, row.Passes = float64(f.Lanes[admission.PublicLane].Serving), float64(r.passes)
}

// rtt draws a round trip of the given mean: exponentially distributed,
// as the crowd measured them (most are short, a few wait long for a
// machine busy with other work).
func (r *benchRun) rtt(mean time.Duration) time.Duration {
	return time.Duration(r.rtts.ExpFloat64() * float64(mean))
}

// count adds one to the second of now in series.
func (r *benchRun) count(series *[]int) {
	if r.loop.now < 0 {
		return
	}
	i := int(r.loop.now / time.Second)
	for len(*series) <= i {
		*series = append(*series, 0)
	}
	(*series)[i]++
}

// call is an API call of s: the engine answers halfway through the round
// trip rtt, the shopper reads the answer at its end.
func (r *benchRun) call(rtt time.Duration, engine func() (admission.Status, error), then func(admission.Status)) {
	r.loop.after(rtt/2, func() {
		st, err := engine()
		r.loop.after(rtt-rtt/2, func() {
			if err != nil {
				r.res.Errors++ // the crowd gives up on an answer it cannot use
				return
			}
			then(st)
		})
	})
}

// join is the shopper's POST /_wr/api/join.
func (r *benchRun) join(s *benchShopper) {
	r.call(r.rtt(r.cfg.Model.Join), func() (admission.Status, error) {
		a, err := r.engine.Arrive(r.ctx, benchEvent, admission.JoinRequest{Binding: "bench"})
		if err != nil {
			return admission.Status{}, err
		}
		s.ticket = a.Ticket
		if a.Pass != nil {
			r.passes++
			s.pass = a.Pass
		}
		return a.Status, nil
	}, func(st admission.Status) {
		r.res.Joined++
		r.waited(s, st)
	})
}

// waited acts on a status: shop when admitted, else poll again at the
// refresh told (2 s when none).
func (r *benchRun) waited(s *benchShopper, st admission.Status) {
	if st.Kind == admission.StatusAdmitted {
		r.admit(s)
		return
	}
	wait := st.Refresh
	if wait <= 0 {
		wait = 2 * time.Second
	}
	// As the room's page does (static/web/room.js, jitter): ±20 %, so
	// that visitors do not poll in step.
	wait = time.Duration(float64(wait) * (0.8 + 0.4*r.rng.Float64()))
	r.loop.after(wait, func() {
		r.res.Polls++
		r.call(r.rtt(r.cfg.Model.Status), func() (admission.Status, error) {
			res, err := r.engine.Status(r.ctx, benchEvent, s.ticket)
			if err != nil {
				return admission.Status{}, err
			}
			s.ticket = res.Ticket
			if res.Pass != nil {
				r.passes++
				s.pass = res.Pass
			}
			return res.Status, nil
		}, func(st admission.Status) { r.waited(s, st) })
	})
}

// admit is the shopper told "admitted": on to the pages, later or never
// for a no-show.
func (r *benchRun) admit(s *benchShopper) {
	r.res.Admitted++
	r.count(&r.admitted)
	at := r.loop.now.Seconds()
	if math.IsNaN(r.res.FirstAdmit) {
		r.res.FirstAdmit = at
	}
	r.res.LastAdmit = at
	if s.noShow {
		r.res.NoShows++
		if !s.late {
			return
		}
		r.loop.after(r.cfg.Late, func() {
			r.res.LateBack++
			r.shop(s)
		})
		return
	}
	r.loop.after(r.cfg.Model.FirstPage, func() { r.shop(s) })
}

// shop starts the shopper's pages.
func (r *benchRun) shop(s *benchShopper) {
	r.active++
	r.page(s, 1)
}

// page sends gated page p (the checkout after the last page) through the
// proxy: the meter sees it and times it, the origin serves it or answers
// 503 (retried after its Retry-After of 1 s), and the checkout's
// X-Waitroom-Complete tells the meter and the engine the shopper is done.
func (r *benchRun) page(s *benchShopper, p int) {
	rtt := r.rtt(r.cfg.Model.Page)
	half := rtt / 2
	r.loop.after(half, func() {
		if !s.used && s.pass != nil {
			s.used = r.engine.NoteUse(benchEvent, s.pass) // as the gate does at a pass's first use
		}
		r.meter.Seen(&s.presence, r.loop.time())
		r.meter.Start()
		r.origin.arrive(&originRequest{answer: func(status int, latency time.Duration) {
			r.meter.Done(r.loop.time(), latency, status, false)
			checkout := p == r.cfg.Pages+1
			if status == 200 && checkout && r.meter.Complete(&s.presence) {
				r.engine.Complete(benchEvent, s.ticket.Visitor)
			}
			r.loop.after(rtt-half, func() {
				switch {
				case status != 200:
					r.res.Retries503++
					r.loop.after(time.Second, func() { r.page(s, p) })
				case checkout:
					r.res.Completions++
					r.count(&r.finished)
					r.active--
				default:
					r.loop.after(r.cfg.Think, func() { r.page(s, p+1) })
				}
			})
		}})
	})
}
