package sim

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
)

// Config is a scenario.
type Config struct {
	// Seed makes the run repeatable: same seed, same result.
	Seed uint64
	// Duration is how long the simulation runs after the queue opens.
	Duration time.Duration
	// PrequeueFor is how long before the on-sale the queue opens.
	PrequeueFor time.Duration
	// Event tunes the queue (its times are set from PrequeueFor).
	Event admission.EventConfig
	// Arrivals are the visitors' arrival curves.
	Arrivals []Arrival
	// Origin is the site behind the queue.
	Origin Origin
	// Abandon is the share of visitors who give up before their turn,
	// leaving after an exponentially distributed time (mean AbandonAfter).
	Abandon      float64
	AbandonAfter time.Duration
	// Dir is where the embedded store lives; a temporary directory (in
	// memory when /dev/shm exists) when "".
	Dir string
}

// Arrival is visitors arriving between From and To after the queue
// opens: Count of them, evenly spread, or, with Decay > 0, front-loaded
// like a flash crowd (the rate decays exponentially with that time
// constant).
type Arrival struct {
	From, To time.Duration
	Count    int
	Decay    time.Duration
}

// Default is the scenario: a pre-queue, a flash crowd at the
// on-sale and a trickle; an origin that sells 200 visitors a minute, then
// drops to 100, then recovers; some visitors give up while waiting.
func Default() Config {
	return Config{
		Seed:        1,
		Duration:    45 * time.Minute,
		PrequeueFor: 10 * time.Minute,
		Event:       admission.EventConfig{ID: "sim"},
		Arrivals: []Arrival{
			{From: 0, To: 10 * time.Minute, Count: 3000},                                    // the pre-queue
			{From: 10 * time.Minute, To: 15 * time.Minute, Count: 4000, Decay: time.Minute}, // the flash crowd
			{From: 15 * time.Minute, To: 40 * time.Minute, Count: 1500},                     // a trickle
		},
		Origin: Origin{Capacity: []CapacityStep{
			{At: 0, PerMinute: 200},
			{At: 22 * time.Minute, PerMinute: 100},
			{At: 32 * time.Minute, PerMinute: 200},
		}},
		Abandon:      0.1,
		AbandonAfter: 10 * time.Minute,
	}
}

// Steady is a scenario for ETA honesty: a steady origin (200 visitors a
// minute), a pre-queue, a flash crowd and then arrivals below capacity, so
// that the queue drains and later joiners are admitted during the run.
func Steady() Config {
	return Config{
		Seed:        2,
		Duration:    50 * time.Minute,
		PrequeueFor: 5 * time.Minute,
		Event:       admission.EventConfig{ID: "steady"},
		Arrivals: []Arrival{
			{From: 0, To: 5 * time.Minute, Count: 1000},
			{From: 5 * time.Minute, To: 10 * time.Minute, Count: 2500, Decay: time.Minute},
			{From: 10 * time.Minute, To: 40 * time.Minute, Count: 4500},
		},
		Origin:       Origin{Capacity: []CapacityStep{{At: 0, PerMinute: 200}}},
		Abandon:      0.1,
		AbandonAfter: 10 * time.Minute,
	}
}

// Scaled multiplies a scenario's arrivals and capacity by k, so that
// 30-second measurements are not dominated by sampling noise.
func Scaled(cfg Config, k int) Config {
	cfg.Arrivals = slices.Clone(cfg.Arrivals)
	for i := range cfg.Arrivals {
		cfg.Arrivals[i].Count *= k
	}
	cfg.Origin.Capacity = slices.Clone(cfg.Origin.Capacity)
	for i := range cfg.Origin.Capacity {
		cfg.Origin.Capacity[i].PerMinute *= float64(k)
	}
	return cfg
}

// visitor is one simulated visitor.
type visitor struct {
	i         int
	arrive    time.Time
	leaveAt   time.Time // gives up waiting then (zero: never)
	ticket    admission.Ticket
	shownETA  admission.ETA // at join
	firstETA  admission.ETA // the first known ETA shown
	firstAt   time.Time
	reached   time.Time // when the counter reached their number
	admitted  time.Time // when they saw "admitted"
	completed time.Time
}

// Result is what a run measured.
type Result struct {
	Config   Config
	Joined   int
	Admitted int
	Gone     int // gave up before their turn
	// Windows are 30-second measurements of admission against capacity.
	Windows []Window
	// Changes are the capacity changes and how long admission took to
	// settle within ±15 % of the new capacity.
	Changes []Change
	// ErrorRateConverged is the origin's error rate over the windows in
	// which admission had settled.
	ErrorRateConverged float64
	ETAAtJoin          Honesty
	ETAFirstShown      Honesty
	Fairness           Fairness
	Elapsed            time.Duration
}

// Window is one 30-second measurement.
type Window struct {
	At        time.Duration // end of the window, after the queue opened
	Capacity  float64       // visitors per minute the origin could sell
	Admitted  float64       // visitors per minute who came in
	Completed float64       // visitors per minute who bought
	ErrorRate float64
	Waiting   int // visitors with a number, not reached
	Limit     int
	Active    int     // shoppers in the origin
	Pending   int     // offered, not yet come (as the controller saw it)
	NoShow    float64 // measured no-show rate
}

// Change is a capacity change and how admission followed it. Admission
// rates are over sliding 30-second windows, stepped by 5 seconds.
type Change struct {
	At       time.Duration
	From, To float64
	// Settled is how long after the change the first 30-second window
	// within ±15 % of the new capacity starts (windows lie wholly after
	// the change); -1 when none is.
	Settled time.Duration
	// Mean is the admission rate from Settled to the next change, as a
	// share of the new capacity.
	Mean float64
	// InBand is the share of the 30-second windows from Settled to the
	// next change that are within ±15 %.
	InBand float64
}

// Honesty measures ETAs against when visitors were actually admitted.
type Honesty struct {
	Shown int // visitors who were shown an ETA
	// WithinHigh is the share admitted no later than the High shown.
	WithinHigh float64
	// MedianRatio is the median of actual wait / shown Seconds.
	MedianRatio float64
	// SteadyMedianRatio is the same over visitors whose whole wait fell
	// in a steady stretch of capacity.
	SteadyMedianRatio float64
	SteadyCount       int
}

// Fairness measures the draw.
type Fairness struct {
	Prequeue          int     // pre-queue visitors drawn
	Spearman          float64 // rank correlation of arrival and number in the pre-queue
	TrancheOrderKept  bool    // every earlier tranche's numbers come before a later one's
	AuditRecomputes   bool    // the published audit of the pre-queue checks and holds everyone at their number
	TranchesRecounted int
}

type simEvent struct {
	at   time.Time
	kind int // 0 arrival, 1 poll
	v    *visitor
}

type eventQueue []simEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].v.i < q[j].v.i
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

type meter struct{ o *origin }

func (m meter) Measure(string, time.Time) admission.Measurements { return m.o.measure() }

// fakeClock is the simulated time; the store's background flusher reads
// it too.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Run simulates cfg and returns what it measured.
func Run(cfg Config) (*Result, error) {
	started := time.Now()
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := &fakeClock{}
	clk.set(start.Add(-time.Second))
	ev := cfg.Event
	if ev.ID == "" {
		ev.ID = "sim"
	}
	ev.QueueOpensAt = start
	ev.OnSaleAt = start.Add(cfg.PrequeueFor)
	tick := ev.Controller.Tick
	if tick <= 0 {
		tick = admission.DefaultTick
	}

	dir := cfg.Dir
	if dir == "" {
		parent := ""
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			parent = "/dev/shm"
		}
		d, err := os.MkdirTemp(parent, "waitroom-sim-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	store, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk.now})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	org := newOrigin(cfg.Origin, rand.New(rand.NewPCG(cfg.Seed, 0x0019)))
	var seed [32]byte
	for i := range 8 {
		seed[i] = byte(cfg.Seed >> (8 * i))
	}
	engine, err := admission.New(admission.Options{Store: store, Clock: clk.now, Meter: meter{org},
		Rand: rand.NewChaCha8(seed), Replica: "sim", Logger: discardLogger()}, ev)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))

	// Visitors and their arrival times.
	var visitors []*visitor
	for _, a := range cfg.Arrivals {
		span := a.To - a.From
		for k := range a.Count {
			var off time.Duration
			u := (float64(k) + rng.Float64()) / float64(a.Count)
			if a.Decay > 0 {
				// Invert the truncated exponential's distribution function.
				tau := a.Decay.Seconds()
				off = time.Duration(-tau*math.Log(1-u*(1-math.Exp(-span.Seconds()/tau)))) * time.Second
			} else {
				off = time.Duration(u * float64(span))
			}
			v := &visitor{arrive: start.Add(a.From + off)}
			if rng.Float64() < cfg.Abandon {
				v.leaveAt = v.arrive.Add(time.Duration(rng.ExpFloat64() * float64(cfg.AbandonAfter)))
			}
			visitors = append(visitors, v)
		}
	}
	sort.SliceStable(visitors, func(i, j int) bool { return visitors[i].arrive.Before(visitors[j].arrive) })
	q := &eventQueue{}
	for i, v := range visitors {
		v.i = i
		heap.Push(q, simEvent{at: v.arrive, kind: 0, v: v})
	}

	res := &Result{Config: cfg}
	var perTick []int                  // visitors admitted in each tick
	waiting := map[string][]*visitor{} // by lane: visitors with a number, not reached
	var winAdmitted, winCompleted, winRequests, winErrors, admittedBefore int
	end := start.Add(cfg.Duration)
	for next := start; !next.After(end); next = next.Add(tick) {
		// Everything due before this tick, in time order.
		for q.Len() > 0 && (*q)[0].at.Before(next) {
			e := heap.Pop(q).(simEvent)
			clk.set(e.at)
			v := e.v
			switch e.kind {
			case 0:
				t, st, err := engine.Join(ctx, ev.ID, admission.JoinRequest{Binding: "sim"})
				if err != nil {
					continue // sold out or closed: turned away
				}
				res.Joined++
				v.ticket, v.shownETA = t, st.ETA
				v.noteETA(st.ETA, clk.now())
				heap.Push(q, simEvent{at: clk.now().Add(st.Refresh), kind: 1, v: v})
			case 1:
				if !v.leaveAt.IsZero() && !clk.now().Before(v.leaveAt) {
					res.Gone++
					continue // gave up
				}
				had := v.ticket.Number
				r, err := engine.Status(ctx, ev.ID, v.ticket)
				if err != nil {
					return nil, err
				}
				v.ticket = r.Ticket
				if had == 0 && v.ticket.Number != 0 {
					waiting[v.ticket.Lane] = append(waiting[v.ticket.Lane], v)
				}
				v.noteETA(r.Status.ETA, clk.now())
				if r.Status.Kind == admission.StatusAdmitted && r.Pass != nil {
					if v.admitted.IsZero() {
						v.admitted = clk.now()
						res.Admitted++
						winAdmitted++
						org.enter(v, clk.now())
					}
					continue // admitted visitors stop polling
				}
				if r.Status.Kind == admission.StatusSoldOut || r.Status.Kind == admission.StatusClosed {
					continue
				}
				heap.Push(q, simEvent{at: clk.now().Add(r.Status.Refresh), kind: 1, v: v})
			}
		}
		perTick = append(perTick, winAdmitted-admittedBefore)
		admittedBefore = winAdmitted
		clk.set(next)
		org.step(next, next.Sub(start))
		winRequests += org.requests
		winErrors += org.errors
		winCompleted += org.completions
		if err := engine.Tick(ctx); err != nil {
			return nil, err
		}
		f := engine.Figures(ev.ID)
		for lane, ws := range waiting {
			serving := f.Lanes[lane].Serving
			ws = slices.DeleteFunc(ws, func(v *visitor) bool {
				if v.ticket.Number <= serving {
					v.reached = next
					return true
				}
				return false
			})
			waiting[lane] = ws
		}
		if off := next.Sub(start); off > 0 && off%(30*time.Second) == 0 {
			w := Window{At: off, Capacity: org.capacity(off - time.Second), Admitted: float64(winAdmitted) * 2,
				Completed: float64(winCompleted) * 2, Limit: f.Limit, Active: f.Last.Active, Pending: f.Pending,
				NoShow: f.NoShowRate}
			if winRequests > 0 {
				w.ErrorRate = float64(winErrors) / float64(winRequests)
			}
			for _, ws := range waiting {
				w.Waiting += len(ws)
			}
			res.Windows = append(res.Windows, w)
			winAdmitted, winCompleted, winRequests, winErrors, admittedBefore = 0, 0, 0, 0, 0
		}
	}
	res.measure(visitors, cfg, start, perTick, tick)
	res.fairness(ctx, engine, ev.ID, visitors, start.Add(cfg.PrequeueFor))
	res.Elapsed = time.Since(started)
	return res, nil
}

func (v *visitor) noteETA(e admission.ETA, at time.Time) {
	if e.Seconds >= 0 && v.firstAt.IsZero() {
		v.firstETA, v.firstAt = e, at
	}
}

// measure computes convergence and ETA honesty. perTick[i] is how many
// were admitted during tick i (ending at (i)·tick after the queue opened).
func (r *Result) measure(visitors []*visitor, cfg Config, start time.Time, perTick []int, tick time.Duration) {
	// rate is the admission rate, per minute, over (from, to].
	rate := func(from, to time.Duration) float64 {
		n := 0
		for i := int(from / tick); i < int(to/tick) && i < len(perTick); i++ {
			n += perTick[i]
		}
		return float64(n) / (to - from).Minutes()
	}
	const width, step = 30 * time.Second, 5 * time.Second
	steps := cfg.Origin.Capacity
	for i := 1; i < len(steps); i++ {
		c := Change{At: steps[i].At, From: steps[i-1].PerMinute, To: steps[i].PerMinute, Settled: -1}
		until := nextChange(cfg, c.At)
		for from := c.At; from+width <= until; from += step {
			if math.Abs(rate(from, from+width)-c.To)/c.To <= 0.15 {
				c.Settled = from - c.At
				break
			}
		}
		if c.Settled >= 0 {
			settled := c.At + c.Settled
			c.Mean = rate(settled, until) / c.To
			in, all := 0, 0
			for from := settled; from+width <= until; from += step {
				all++
				if math.Abs(rate(from, from+width)-c.To)/c.To <= 0.15 {
					in++
				}
			}
			c.InBand = float64(in) / float64(all)
		}
		r.Changes = append(r.Changes, c)
	}
	// Error rate over the settled stretches.
	var req, errs float64
	for _, c := range r.Changes {
		if c.Settled < 0 {
			continue
		}
		for _, w := range r.Windows {
			if w.At > c.At+c.Settled && w.At <= nextChange(cfg, c.At) {
				// Weight by admitted traffic (a proxy for requests).
				req += w.Completed + 1
				errs += w.ErrorRate * (w.Completed + 1)
			}
		}
	}
	if req > 0 {
		r.ErrorRateConverged = errs / req
	}
	steadyFrom, steadyTo := steadyStretches(cfg)
	r.ETAAtJoin = honesty(visitors, func(v *visitor) (admission.ETA, time.Time) { return v.shownETA, v.arrive }, steadyFrom, steadyTo, start)
	r.ETAFirstShown = honesty(visitors, func(v *visitor) (admission.ETA, time.Time) { return v.firstETA, v.firstAt }, steadyFrom, steadyTo, start)
}

func nextChange(cfg Config, at time.Duration) time.Duration {
	for _, s := range cfg.Origin.Capacity {
		if s.At > at {
			return s.At
		}
	}
	return cfg.Duration
}

// steadyStretches returns the stretches (offsets) during which capacity
// did not change.
func steadyStretches(cfg Config) ([]time.Duration, []time.Duration) {
	var from, to []time.Duration
	steps := cfg.Origin.Capacity
	for i, s := range steps {
		end := cfg.Duration
		if i+1 < len(steps) {
			end = steps[i+1].At
		}
		from, to = append(from, s.At), append(to, end)
	}
	return from, to
}

func honesty(visitors []*visitor, shown func(*visitor) (admission.ETA, time.Time), from, to []time.Duration, start time.Time) Honesty {
	var h Honesty
	var within int
	var ratios, steady []float64
	for _, v := range visitors {
		eta, at := shown(v)
		if v.reached.IsZero() || at.IsZero() || eta.Seconds < 0 {
			continue
		}
		h.Shown++
		wait := v.reached.Sub(at).Seconds()
		if wait <= float64(eta.High) {
			within++
		}
		if eta.Seconds > 0 {
			ratio := wait / float64(eta.Seconds)
			ratios = append(ratios, ratio)
			a, b := at.Sub(start), v.reached.Sub(start)
			for i := range from {
				if a >= from[i] && b < to[i] {
					steady = append(steady, ratio)
				}
			}
		}
	}
	if h.Shown > 0 {
		h.WithinHigh = float64(within) / float64(h.Shown)
	}
	h.MedianRatio = median(ratios)
	h.SteadyMedianRatio, h.SteadyCount = median(steady), len(steady)
	return h
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// fairness checks the draw on what the run produced.
func (r *Result) fairness(ctx context.Context, e *admission.Engine, id string, visitors []*visitor, onSale time.Time) {
	var arrival, number []int
	type drawn struct{ tranche, num int }
	var all []drawn
	for _, v := range visitors {
		if v.ticket.Number == 0 {
			continue
		}
		all = append(all, drawn{v.ticket.Tranche, int(v.ticket.Number)})
		if v.ticket.Tranche == 0 {
			arrival = append(arrival, v.i)
			number = append(number, int(v.ticket.Number))
		}
	}
	r.Fairness.Prequeue = len(arrival)
	r.Fairness.Spearman = spearman(arrival, number)
	slices.SortFunc(all, func(a, b drawn) int { return a.num - b.num })
	r.Fairness.TrancheOrderKept = slices.IsSortedFunc(all, func(a, b drawn) int { return a.tranche - b.tranche })
	// The published audit of the pre-queue: it checks, and every
	// pre-queue visitor's hash is at their number.
	a, err := e.Audit(ctx, id, admission.PublicLane, 0, 0, math.MaxInt32)
	if err == nil && a.Drawn {
		ok := admission.CheckAudit(a.Commitment, a.Seed, a.Hashes)
		for _, v := range visitors {
			if v.ticket.Tranche == 0 && v.ticket.Number != 0 {
				i := int(v.ticket.Number - a.First)
				if i < 0 || i >= len(a.Hashes) || a.Hashes[i] != admission.VisitorHash(v.ticket.Visitor) {
					ok = false
				}
			}
		}
		r.Fairness.AuditRecomputes = ok
	}
}

// spearman is the rank correlation of two equally long samples without ties.
func spearman(x, y []int) float64 {
	n := len(x)
	if n < 3 {
		return math.NaN()
	}
	rank := func(v []int) []float64 {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, n)
		for pos, i := range idx {
			r[i] = float64(pos)
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	var d2 float64
	for i := range rx {
		d := rx[i] - ry[i]
		d2 += d * d
	}
	fn := float64(n)
	return 1 - 6*d2/(fn*(fn*fn-1))
}

// Report writes the result for people.
func (r *Result) Report(w io.Writer) {
	fmt.Fprintf(w, "simulation: seed %d, %s after the queue opens (on-sale at +%s), %d arrivals, simulated in %s\n",
		r.Config.Seed, r.Config.Duration, r.Config.PrequeueFor, r.Joined, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "admitted %d, gave up while waiting %d\n\n", r.Admitted, r.Gone)
	fmt.Fprintln(w, "time    capacity/min  admitted/min  completed/min  errors  waiting  limit  active  pending  no-show")
	for _, win := range r.Windows {
		fmt.Fprintf(w, "%6s  %12.0f  %12.0f  %13.0f  %5.1f%%  %7d  %5d  %6d  %7d  %6.0f%%\n", fmtOffset(win.At), win.Capacity,
			win.Admitted, win.Completed, 100*win.ErrorRate, win.Waiting, win.Limit, win.Active, win.Pending, 100*win.NoShow)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "convergence: admission over sliding 30 s windows against capacity (target: within ±15 % within 30 s of a change)")
	for _, c := range r.Changes {
		settled := "never"
		if c.Settled >= 0 {
			settled = c.Settled.String()
		}
		fmt.Fprintf(w, "  at %s: %.0f → %.0f visitors/min: the first window within ±15%% starts %s after the change %s; from there the mean is %.0f%% of capacity and %.0f%% of windows are within ±15%%\n",
			fmtOffset(c.At), c.From, c.To, settled, verdict(c.Settled >= 0 && c.Settled <= 30*time.Second),
			100*c.Mean, 100*c.InBand)
	}
	fmt.Fprintf(w, "origin error rate once settled: %.2f%% (target < 1%%) %s\n\n", 100*r.ErrorRateConverged,
		verdict(r.ErrorRateConverged < 0.01))
	for _, h := range []struct {
		name string
		h    Honesty
	}{{"ETA shown at join", r.ETAAtJoin}, {"first ETA shown", r.ETAFirstShown}} {
		if h.h.Shown == 0 {
			fmt.Fprintf(w, "%s: n/a (no visitor shown one was admitted within the run)\n", h.name)
			continue
		}
		steady := fmt.Sprintf("%.2f over %d (target 0.8–1.2) %s", h.h.SteadyMedianRatio, h.h.SteadyCount,
			verdict(h.h.SteadyMedianRatio >= 0.8 && h.h.SteadyMedianRatio <= 1.2))
		if h.h.SteadyCount == 0 {
			steady = "n/a (no wait fell within one steady stretch)"
		}
		fmt.Fprintf(w, "%s: %d visitors; admitted by eta_high %.1f%% (target ≥ 90%%) %s; median actual/shown %.2f; in steady stretches %s\n",
			h.name, h.h.Shown, 100*h.h.WithinHigh, verdict(h.h.WithinHigh >= 0.9), h.h.MedianRatio, steady)
	}
	f := r.Fairness
	fmt.Fprintf(w, "\nfairness: pre-queue Spearman rho(arrival, number) = %+.4f over %d (target |rho| < 0.05) %s; tranche order kept %v; audit recomputes %v\n",
		f.Spearman, f.Prequeue, verdict(math.Abs(f.Spearman) < 0.05), f.TrancheOrderKept, f.AuditRecomputes)
}

func fmtOffset(d time.Duration) string {
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
