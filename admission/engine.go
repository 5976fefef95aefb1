package admission

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Engine runs the queues of a set of events: joins, draws, statuses and
// admission. Status for a drawn ticket is computed from the ticket and
// in-memory counters only. One replica at a time (the lease holder) runs
// each event's draws and controller; every replica follows the store's
// serving counters and draws. An Engine is safe for concurrent use.
type Engine struct {
	opts  Options
	clock func() time.Time
	// realClock is true when clock is time.Now: a reading the caller took
	// already (StatusAt) is as good as the engine's own.
	realClock bool
	// onceStore is the store when it spends one-time values itself.
	onceStore OnceStore
	log       *slog.Logger
	// events is the event set, replaced whole by Apply (copy on write):
	// statuses and the gate read it without a lock. applyMu serialises
	// Apply; wake tells Run that the tick interval may have changed.
	events  atomic.Pointer[map[string]*event]
	applyMu sync.Mutex
	wake    chan struct{}
	// every is Run's tick interval (0 until Run starts).
	every atomic.Int64
}

// Options configure an Engine.
type Options struct {
	Store Store
	// Clock returns the time; time.Now when nil (the simulator passes a
	// fake clock and calls Tick itself).
	Clock func() time.Time
	// Meter measures the origin for each event every tick; nil measures
	// nothing (the controller then only follows caps).
	Meter Meter
	// Inventory tells linked events' remaining seats; nil: none linked.
	Inventory Inventory
	// Replica names this process for the lease (random when "").
	Replica string
	// Rand is the source of visitor ids and seeds (crypto/rand when nil;
	// the simulator passes a seeded one to be deterministic).
	Rand io.Reader
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
	// ShadowKey marks the visitor ids of the shadow queue (see
	// JoinRequest.Shadow): at least 32 bytes, the same on every replica;
	// nil: no shadow queue.
	ShadowKey []byte
	// MinuteRetention is how long the leader's minute records are kept
	// in the store (DefaultMinuteRetention when 0; negative: none are
	// written).
	MinuteRetention time.Duration
	// Lease is how long an event's leadership lasts without renewal: a
	// leader that dies is replaced within it, and the samples of a
	// replica that dies are forgotten within it (DefaultLease when 0;
	// at least two of an event's ticks, which renew it).
	Lease time.Duration
	// NoShows, when set, is told on the leader of each offer whose no-show
	// grace ran out with numbers whose pass was never used, once per
	// offer. It is called from the tick, so it must not block (an event
	// sink's Publish).
	NoShows func(NoShow)
}

// NoShow is a run of queue numbers the serving counter reached, of which
// Count were not used by the end of the no-show grace: their visitors
// never came for their turn, or took the pass and never came. Plain data.
type NoShow struct {
	Event, Lane string
	// From and To bound the numbers reached together (inclusive); Count
	// of them are no-shows (numbers passed over as gone not counted).
	From, To uint64
	Count    int
	// Offered is when the counter reached them, At when the grace ran
	// out for them (the tick that noticed).
	Offered, At time.Time
}

// DefaultLease is Options.Lease's default.
const DefaultLease = 5 * time.Second

const (
	// joinMargin is how long after a tranche closes its draw waits, so
	// that joins already in flight land in it.
	joinMargin = time.Second
	// minLeaseTicks is the shortest lease in ticks: the leader renews
	// it every tick, and one late tick must not lose it.
	minLeaseTicks = 2
	// rejoinAfter is how long after its close a tranche without a draw
	// record is given up on: its visitors join the current tranche.
	rejoinAfter = 2 * time.Minute
	// maxNoShowRate bounds the compensation for no-shows.
	maxNoShowRate = 0.9
	// noShowWindow is how much history the no-show rate is measured over.
	noShowWindow = time.Minute
	// ticketLifetime bounds a ticket for events without a closing time.
	ticketLifetime = 48 * time.Hour
)

// OpenEpoch anchors the tranches of an event open from the start (no
// on_sale_at): a fixed instant, so that every replica numbers tranches
// alike, recent enough that tranche numbers stay short in URLs. Such an event looks for undrawn tranches only from a little
// before the engine started (see event.floor): their visitors' tickets
// outlive a restart, and rejoin the current tranche if theirs was never
// drawn.
var OpenEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// New starts an engine for the given events.
func New(opts Options, events ...EventConfig) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("admission: a store is required")
	}
	realClock := opts.Clock == nil
	if realClock {
		opts.Clock = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Lease < 0 {
		return nil, errors.New("admission: the lease must not be negative")
	}
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.MinuteRetention == 0 {
		opts.MinuteRetention = DefaultMinuteRetention
	}
	if opts.ShadowKey != nil && len(opts.ShadowKey) < 32 {
		return nil, errors.New("admission: the shadow key must be at least 32 bytes")
	}
	opts.ShadowKey = slices.Clone(opts.ShadowKey)
	if opts.Replica == "" {
		var b [8]byte
		io.ReadFull(rand.Reader, b[:])
		opts.Replica = fmt.Sprintf("replica-%x", b)
	}
	e := &Engine{opts: opts, clock: opts.Clock, realClock: realClock, log: opts.Logger, wake: make(chan struct{}, 1)}
	if o, ok := opts.Store.(OnceStore); ok && o.SpendsOnce() {
		e.onceStore = o
	}
	set := map[string]*event{}
	for _, cfg := range events {
		cfg, err := normalize(cfg)
		if err != nil {
			return nil, err
		}
		if set[cfg.ID] != nil {
			return nil, fmt.Errorf("admission: event %q configured twice", cfg.ID)
		}
		set[cfg.ID] = newEvent(e, cfg)
	}
	e.events.Store(&set)
	return e, nil
}

// normalize fills defaults and checks a configuration.
func normalize(cfg EventConfig) (EventConfig, error) {
	if cfg.ID == "" {
		return cfg, errors.New("admission: an event needs an id")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeAlways
	}
	if !cfg.Mode.Valid() {
		return cfg, fmt.Errorf("admission: event %s: unknown mode %q", cfg.ID, cfg.Mode)
	}
	if cfg.OnSaleAt.IsZero() {
		if cfg.Mode == ModeScheduled || !cfg.QueueOpensAt.IsZero() {
			return cfg, fmt.Errorf("admission: event %s: a scheduled event, or one whose queue opens at a time, needs on_sale_at", cfg.ID)
		}
		cfg.OnSaleAt, cfg.QueueOpensAt, cfg.openFromStart = OpenEpoch, OpenEpoch, true
	}
	if cfg.QueueOpensAt.After(cfg.OnSaleAt) {
		return cfg, fmt.Errorf("admission: event %s: queue_opens_at must not be after on_sale_at", cfg.ID)
	}
	if !cfg.ClosesAt.IsZero() && !cfg.ClosesAt.After(cfg.OnSaleAt) {
		return cfg, fmt.Errorf("admission: event %s: closes_at must be after on_sale_at", cfg.ID)
	}
	if cfg.QueueOpensAt.IsZero() {
		cfg.QueueOpensAt = cfg.OnSaleAt
	}
	if cfg.Tranche <= 0 {
		cfg.Tranche = DefaultTranche
	}
	if cfg.SessionDuration <= 0 {
		cfg.SessionDuration = DefaultSessionDuration
	}
	if cfg.MaxSession <= 0 {
		cfg.MaxSession = DefaultMaxSessionFactor * cfg.SessionDuration
	}
	cfg.MaxSession = max(cfg.MaxSession, cfg.SessionDuration)
	if cfg.NoShowGrace <= 0 {
		cfg.NoShowGrace = DefaultNoShowGrace
	}
	if cfg.CompleteGrace <= 0 {
		cfg.CompleteGrace = DefaultCompleteGrace
	}
	if cfg.VisitorsPerSeat <= 0 {
		cfg.VisitorsPerSeat = DefaultVisitorsPerSeat
	}
	if cfg.Controller.Tick <= 0 {
		cfg.Controller.Tick = DefaultTick
	}
	lanes := slices.Clone(cfg.Lanes)
	if !slices.ContainsFunc(lanes, func(l LaneConfig) bool { return l.Name == PublicLane }) {
		lanes = append(lanes, LaneConfig{Name: PublicLane})
	}
	names := map[string]bool{}
	for i := range lanes {
		if lanes[i].Name == "" || names[lanes[i].Name] {
			return cfg, fmt.Errorf("admission: event %s: lane names must be unique and non-empty", cfg.ID)
		}
		names[lanes[i].Name] = true
		if lanes[i].Share <= 0 {
			lanes[i].Share = 1
		}
	}
	cfg.Lanes = lanes
	return cfg, nil
}

// event is one event's queue state on this replica.
type event struct {
	e *Engine
	// cfgp is the event's configuration, replaced whole by Apply; read
	// it through conf. What identifies the queue (id, schedule, tranche,
	// lanes) never changes once the queue has opened.
	cfgp   atomic.Pointer[EventConfig]
	lanes  []*lane
	byName map[string]*lane

	control   atomic.Pointer[Control]
	controlMu sync.Mutex // serialises UpdateControl
	leader    atomic.Bool
	revoked   atomic.Pointer[map[string]time.Time]
	// bars are the visitor bars as last read from the store (plus those
	// made here since), replaced whole: the gate reads them without a
	// lock. pending holds the bars made here that the store has not
	// taken yet (completions are written at the next tick); npending is
	// its size, so polls skip the lock when it is empty.
	bars     atomic.Pointer[map[VisitorID]VisitorBar]
	pendMu   sync.Mutex
	pending  map[VisitorID]VisitorBar
	npending atomic.Int32

	// floor is the first tranche the draws and the member counts look
	// at: 0, or for an event open from the start, a little before the
	// engine started (tranche numbers count from OpenEpoch).
	floor int
	// gate is what the proxy's gate reads without a lock (see Gate).
	gate Gate
	// lastTick is when this replica's last tick of the event began
	// (Unix ns; 0: none yet).
	lastTick atomic.Int64
	// slots is this replica's view of the pass-through slots (see
	// enter.go).
	slots slotCache
	// passed counts the visitors let straight through on this replica.
	passed atomic.Int64
	// uses are the passes first used on this replica since the last
	// tick (see uses.go).
	uses useBuffer

	// minted counts the passes minted on this replica (status polls
	// that admitted), redeemed the first uses of passes noted here;
	// both go into this replica's samples.
	minted, redeemed atomic.Uint64
	// joined, etaKept, etaLate and defence count, on this replica, what
	// the leader's minute records sum (see Sample and record.go).
	joined, etaKept, etaLate atomic.Uint64
	defence                  [len(DefenceBands)]atomic.Uint64

	tickMu   sync.Mutex // serialises ticks; guards what follows
	ctrl     *Controller
	restored bool
	// sample is this replica's sample of the last tick (with a Sampler),
	// sampleBuf its encoding's buffer; lastCompl the completions count
	// of each replica at the leader's last tick (see mergeSamples).
	sample    Sample
	sampled   bool
	sampleBuf []byte
	lastCompl map[string]uint64
	// heard are the other replicas' samples as the leader last read them
	// (see measure); reset when this replica takes the lead.
	heard   map[string]*heardSample
	admits  []admitted // recent Admit outputs, for MaxNewPerMinute
	decided bool       // the controller ran at this tick
	figures atomic.Pointer[Figures]
	// decisions are the controller's recent decisions on this replica.
	decisions *decisionLog
	// rec is the leader's minute record in the making (record.go).
	rec recorder
}

type admitted struct {
	at time.Time
	n  int
}

// lane is one lane's state on this replica.
type lane struct {
	cfg   LaneConfig
	event *event

	serving atomic.Uint64
	last    atomic.Uint64 // the highest number drawn
	drawnTo atomic.Int64  // the highest tranche with a known draw record, -1: none
	seeded  atomic.Int64  // open from the start: the highest tranche this replica saw seeded at a join
	rates   atomic.Pointer[[3]float64]
	// measured is set once the rates come from the lane's own pace, not
	// from the prior (see observe).
	measured atomic.Bool

	mu       sync.RWMutex
	draws    map[int]*drawnTranche
	reach    []reached // when the serving counter passed each value (ascending)
	drawList []Draw    // draws in number order
	undrawn  map[int]int
	nundrawn atomic.Int64 // the sum of undrawn, read without the lock

	live     *liveness
	claimed  *bitset // claimed as seen by this replica
	usedHere *bitset // passes whose use this replica recorded (see NoteUse)

	lateMu sync.Mutex
	late   map[uint64]time.Time // came after their grace; admitted at the next tick
	lateOK map[uint64]time.Time // admitted late, at this tick

	// Bookkeeping of ticks, under event.tickMu.
	est      *RateEstimator
	estSeen  uint64 // the serving counter the estimator has seen
	estReady bool
	scanned  int     // leader: tranches up to here are drawn or were empty
	offers   []offer // leader: recent advances
	skipped  *bitset // leader: numbers passed over as gone
}

type drawnTranche struct {
	draw    Draw
	ordered []VisitorID // nil until loaded
}

type reached struct {
	at      time.Time
	serving uint64
}

// offer is one tick's advance of a lane: numbers from..to were reached,
// of which skipped were passed over as gone (not polled within grace).
type offer struct {
	at       time.Time
	from, to uint64
	skipped  int
	told     bool // Options.NoShows has been told of its no-shows
	counted  bool // its no-shows are in a minute record
}

func newEvent(e *Engine, cfg EventConfig) *event {
	ev := &event{e: e, byName: map[string]*lane{}, decisions: newDecisionLog(), lastCompl: map[string]uint64{}}
	liveOrigin := cfg.QueueOpensAt
	if cfg.openFromStart {
		since := e.clock().Add(-rejoinAfter - 2*cfg.Tranche)
		ev.floor, liveOrigin = max(0, trancheAt(&cfg, since)), since
	}
	ev.cfgp.Store(&cfg)
	ev.setControl(&Control{})
	ev.revoked.Store(&map[string]time.Time{})
	ev.bars.Store(&map[VisitorID]VisitorBar{})
	ev.pending = map[VisitorID]VisitorBar{}
	for _, lc := range cfg.Lanes {
		l := &lane{cfg: lc, event: ev, draws: map[int]*drawnTranche{}, undrawn: map[int]int{},
			live: newLiveness(liveOrigin), claimed: newBitset(), usedHere: newBitset(), skipped: newBitset(),
			late: map[uint64]time.Time{}, lateOK: map[uint64]time.Time{},
			est: NewRateEstimator(DefaultRateWindow)}
		l.drawnTo.Store(-1)
		l.scanned = -1
		l.rates.Store(&[3]float64{})
		ev.lanes = append(ev.lanes, l)
		ev.byName[lc.Name] = l
	}
	ev.ctrl = NewController(cfg.Controller, cfg.VisitorsPerSeat)
	ev.figures.Store(&Figures{Event: cfg.ID, Lanes: map[string]LaneFigures{}})
	for _, l := range ev.lanes {
		lo, mid, hi := l.priorRates(0) // ETAs from the first second
		l.rates.Store(&[3]float64{lo, mid, hi})
	}
	return ev
}

// lookup returns the event id names (nil: none), without a lock.
func (e *Engine) lookup(id string) *event { return (*e.events.Load())[id] }

// all is the current event set; the caller must not change it.
func (e *Engine) all() map[string]*event { return *e.events.Load() }

// conf is the event's configuration in force.
func (ev *event) conf() *EventConfig { return ev.cfgp.Load() }

func (e *Engine) event(id string) (*event, error) {
	ev := e.lookup(id)
	if ev == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEvent, id)
	}
	return ev, nil
}

// state is the event's state at t.
func (ev *event) state(t time.Time) State {
	c, cfg := ev.control.Load(), ev.conf()
	switch {
	case c.Closed || (!cfg.ClosesAt.IsZero() && !t.Before(cfg.ClosesAt)):
		return StateClosed
	case c.SoldOut:
		return StateSoldOut
	case t.Before(cfg.QueueOpensAt):
		return StateScheduled
	case t.Before(cfg.OnSaleAt):
		return StatePrequeue
	case c.Maintenance:
		return StateMaintenance
	case c.Paused:
		return StatePaused
	case c.Passthrough:
		return StatePassthrough
	}
	return StateSelling
}

// mode is the mode in force: the operator's, else the configured one.
func (ev *event) mode() Mode {
	if m := ev.control.Load().Mode; m.Valid() {
		return m
	}
	return ev.conf().Mode
}

// setControl installs an operator's control on this replica.
func (ev *event) setControl(c *Control) {
	ev.control.Store(c)
	ev.gate.update(c, ev.conf().Mode)
}

// caps are the configured caps unless an operator replaced them.
func (ev *event) caps() Caps {
	if c := ev.control.Load().Caps; c != nil {
		return *c
	}
	return ev.conf().Caps
}
