package sim

import (
	"container/heap"
	"context"
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
		// The operator expects a little less than the origin takes
		// (controller.expected_rate): the ETAs of the pre-queue and the
		// first minutes come from it.
		Event: admission.EventConfig{ID: "sim", Controller: admission.ControllerConfig{ExpectedRate: 180}},
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
		Event:       admission.EventConfig{ID: "steady", Controller: admission.ControllerConfig{ExpectedRate: 180}},
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

	org := newOrigin(cfg.Origin, rand.New(rand.NewPCG(cfg.Seed, 0x0019)))
	engine, closeEngine, err := newEngine(cfg.Dir, clk, cfg.Seed, meter{org}, ev)
	if err != nil {
		return nil, err
	}
	defer closeEngine()
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
						// Their first request goes through the gate with
						// the pass, as the proxy reports it.
						engine.NoteUse(ev.ID, r.Pass)
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

// newEngine starts the real admission engine over the embedded store in
// dir (a temporary directory, in memory when /dev/shm exists, when ""),
// on the fake clock, measuring with m; close stops it and removes the
// temporary directory.
func newEngine(dir string, clk *fakeClock, seed uint64, m admission.Meter, ev admission.EventConfig) (e *admission.Engine, close func(), err error) {
	var cleanup []func()
	close = func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	if dir == "" {
		parent := ""
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			parent = "/dev/shm"
		}
		d, err := os.MkdirTemp(parent, "waitroom-sim-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = append(cleanup, func() { os.RemoveAll(d) })
		dir = d
	}
	store, err := memstore.Open(memstore.Options{Dir: dir, Clock: clk.now})
	if err != nil {
		close()
		return nil, nil, err
	}
	cleanup = append(cleanup, func() { store.Close() })
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	e, err = admission.New(admission.Options{Store: store, Clock: clk.now, Meter: m,
		Rand: rand.NewChaCha8(key), Replica: "sim", Logger: discardLogger()}, ev)
	if err != nil {
		close()
		return nil, nil, err
	}
	return e, close, nil
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
