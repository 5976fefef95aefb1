package admission

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sort"
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
	opts   Options
	clock  func() time.Time
	log    *slog.Logger
	events map[string]*event
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
}

// JoinRequest is a visitor asking for a place.
type JoinRequest struct {
	// Lane is the lane asked for ("" is public).
	Lane string
	// Binding is the device-binding hash the proxy computed.
	Binding string
	// Credential admits to a non-public lane.
	Credential Credential
	// Existing is a ticket for this event the visitor presented, already
	// verified: joining again returns it, the same place.
	Existing *Ticket
	// Shadow places the visitor in the shadow queue: drawn and shown a
	// place like anyone, never admitted (needs Options.ShadowKey).
	Shadow bool
}

// Credential proves membership of a presale lane: an invite code, or an
// account id with the origin's proof (and, if the lane has one, on the
// allowlist).
type Credential struct {
	Invite       string
	Account      string
	AccountProof string
}

// Status is what a visitor's poll says.
type Status struct {
	Event string
	Kind  StatusKind
	Lane  string
	// Position is how many are ahead (0 when admitted); -1 before the draw.
	Position int64
	ETA      ETA
	// Refresh is when to poll next.
	Refresh  time.Duration
	OnSaleAt time.Time
	// DrawAt is when the visitor's tranche is drawn (waiting_for_draw).
	DrawAt time.Time
	// Reason details a closed status ("closed", "session_ended").
	Reason string
}

// StatusResult is a status and what the proxy must hand the visitor.
type StatusResult struct {
	Status Status
	// Ticket is the visitor's ticket, with its number once drawn.
	Ticket Ticket
	// Renewed is true when Ticket differs from the one given: reissue it.
	Renewed bool
	// Pass is set when the visitor is admitted: sign it and set it.
	Pass *Pass
}

// Figures are an event's live figures, for operators and the simulator.
type Figures struct {
	Event      string
	State      State
	Leader     bool
	Limit      int
	Admitted1m int
	NoShowRate float64
	Pending    int
	Last       Measurements
	Lanes      map[string]LaneFigures
}

// LaneFigures are one lane's live figures.
type LaneFigures struct {
	Serving uint64 // numbers admitted so far
	Drawn   uint64 // numbers given out so far
	Waiting uint64 // drawn numbers not yet reached
	Undrawn int    // members of tranches not drawn yet
	// Rates are the admission rate estimates (numbers per second).
	RateLow, RateMid, RateHigh float64
}

// DrawAudit is the public record of one lane's tranche draw.
type DrawAudit struct {
	Event   string
	Lane    string
	Tranche int
	// Commitment is SHA-256 of the seed, published while the tranche is open.
	Commitment [32]byte
	// Drawn tells whether the tranche has been drawn; Seed, First, Count
	// and Hashes are set only then.
	Drawn bool
	Seed  []byte
	First uint64
	Count uint64
	// Offset is the index of Hashes[0] in the drawn order; Hashes are the
	// SHA-256 of the visitor ids, in drawn order.
	Offset int
	Hashes [][32]byte
}

const (
	// joinMargin is how long after a tranche closes its draw waits, so
	// that joins already in flight land in it.
	joinMargin = time.Second
	// leaseTicks is the lease's length in ticks: a leader that dies is
	// replaced within this many ticks.
	leaseTicks = 5
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

// New starts an engine for the given events.
func New(opts Options, events ...EventConfig) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("admission: a store is required")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
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
	e := &Engine{opts: opts, clock: opts.Clock, log: opts.Logger, events: map[string]*event{}}
	for _, cfg := range events {
		cfg, err := normalize(cfg)
		if err != nil {
			return nil, err
		}
		if e.events[cfg.ID] != nil {
			return nil, fmt.Errorf("admission: event %q configured twice", cfg.ID)
		}
		e.events[cfg.ID] = newEvent(e, cfg)
	}
	return e, nil
}

// normalize fills defaults and checks a configuration.
func normalize(cfg EventConfig) (EventConfig, error) {
	if cfg.ID == "" {
		return cfg, errors.New("admission: an event needs an id")
	}
	if cfg.OnSaleAt.IsZero() || cfg.QueueOpensAt.After(cfg.OnSaleAt) {
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
	e      *Engine
	cfg    EventConfig
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

	tickMu   sync.Mutex // serialises ticks; guards what follows
	ctrl     *Controller
	restored bool
	admits   []admitted // recent Admit outputs, for MaxNewPerMinute
	figures  atomic.Pointer[Figures]
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
	rates   atomic.Pointer[[3]float64]

	mu       sync.RWMutex
	draws    map[int]*drawnTranche
	reach    []reached // when the serving counter passed each value (ascending)
	drawList []Draw    // draws in number order
	undrawn  map[int]int

	live    *liveness
	claimed *bitset // claimed as seen by this replica

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
}

func newEvent(e *Engine, cfg EventConfig) *event {
	ev := &event{e: e, cfg: cfg, byName: map[string]*lane{}}
	ev.control.Store(&Control{})
	ev.revoked.Store(&map[string]time.Time{})
	ev.bars.Store(&map[VisitorID]VisitorBar{})
	ev.pending = map[VisitorID]VisitorBar{}
	for _, lc := range cfg.Lanes {
		l := &lane{cfg: lc, event: ev, draws: map[int]*drawnTranche{}, undrawn: map[int]int{},
			live: newLiveness(cfg.QueueOpensAt), claimed: newBitset(), skipped: newBitset(),
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
	return ev
}

func (e *Engine) event(id string) (*event, error) {
	ev := e.events[id]
	if ev == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEvent, id)
	}
	return ev, nil
}

// state is the event's state at t.
func (ev *event) state(t time.Time) State {
	c := ev.control.Load()
	switch {
	case c.Closed || (!ev.cfg.ClosesAt.IsZero() && !t.Before(ev.cfg.ClosesAt)):
		return StateClosed
	case c.SoldOut:
		return StateSoldOut
	case t.Before(ev.cfg.QueueOpensAt):
		return StateScheduled
	case t.Before(ev.cfg.OnSaleAt):
		return StatePrequeue
	case c.Paused:
		return StatePaused
	}
	return StateSelling
}

// caps are the configured caps unless an operator replaced them.
func (ev *event) caps() Caps {
	if c := ev.control.Load().Caps; c != nil {
		return *c
	}
	return ev.cfg.Caps
}

// place appends v to the lane's current tranche and returns its ticket.
func (ev *event) place(ctx context.Context, l *lane, v VisitorID, binding string, now time.Time) (Ticket, error) {
	t := NewTicket(&ev.cfg, l.cfg.Name, v, binding, now)
	if err := ev.e.opts.Store.AppendMember(ctx, ev.cfg.ID, l.cfg.Name, t.Tranche, v); err != nil {
		return Ticket{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	return t, nil
}

// NewTicket is the ticket of visitor v joining lane of cfg's event at now:
// the tranche of now, valid until the event closes and its last session
// ends (or for ticketLifetime). It places nobody in a queue; Join does.
func NewTicket(cfg *EventConfig, lane string, v VisitorID, binding string, now time.Time) Ticket {
	exp := now.Add(ticketLifetime)
	if !cfg.ClosesAt.IsZero() {
		exp = cfg.ClosesAt.Add(cfg.SessionDuration)
	}
	return Ticket{Event: cfg.ID, Visitor: v, Lane: lane, Tranche: trancheAt(cfg, now), Binding: binding,
		IssuedAt: now, ExpiresAt: exp}
}

// admitToLane checks a presale credential: an invite (used once) or an
// account with the origin's proof (and on the allowlist, if there is one).
func (ev *event) admitToLane(ctx context.Context, l *lane, c Credential, now time.Time) error {
	a := l.cfg.Access
	switch {
	case c.Invite != "" && a.InviteSecret != nil:
		code, account, err := ParseInvite(a.InviteSecret, ev.cfg.ID, c.Invite)
		if err != nil {
			return ErrNotAllowed
		}
		if account != "" && (account != c.Account || a.AccountSecret == nil ||
			!CheckAccountProof(a.AccountSecret, ev.cfg.ID, c.Account, c.AccountProof)) {
			return ErrNotAllowed
		}
		forget := now.Add(30 * 24 * time.Hour)
		if !ev.cfg.ClosesAt.IsZero() {
			forget = ev.cfg.ClosesAt.Add(24 * time.Hour)
		}
		first, err := ev.e.opts.Store.UseInvite(ctx, ev.cfg.ID, l.cfg.Name+"/"+code, forget)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		if !first {
			return ErrInviteUsed
		}
		return nil
	case c.Account != "" && a.AccountSecret != nil:
		if !CheckAccountProof(a.AccountSecret, ev.cfg.ID, c.Account, c.AccountProof) {
			return ErrNotAllowed
		}
		if a.Allowlist != nil && !a.Allowlist.Contains(c.Account) {
			return ErrNotAllowed
		}
		return nil
	}
	return ErrNotAllowed
}

// Status computes a visitor's status from their (verified) ticket. For a
// drawn ticket it reads only in-memory counters and allocates nothing;
// the first poll after the draw looks the visitor's number up once.
func (e *Engine) Status(ctx context.Context, id string, t Ticket) (StatusResult, error) {
	ev, err := e.event(id)
	if err != nil {
		return StatusResult{}, err
	}
	if t.Event != id {
		return StatusResult{}, ErrWrongEvent
	}
	return e.status(ctx, ev, t, e.clock())
}

func (e *Engine) status(ctx context.Context, ev *event, t Ticket, now time.Time) (StatusResult, error) {
	l := ev.byName[t.Lane]
	if l == nil {
		return StatusResult{}, fmt.Errorf("%w: %q", ErrUnknownLane, t.Lane)
	}
	res := StatusResult{Ticket: t, Status: Status{Event: ev.cfg.ID, Lane: t.Lane, Position: -1,
		ETA: ETA{Seconds: -1, Low: -1, High: -1}, Refresh: DefaultRefresh, OnSaleAt: ev.cfg.OnSaleAt}}
	st := ev.state(now)
	switch st {
	case StateScheduled:
		res.Status.Kind = StatusScheduled
		return res, nil
	case StateClosed:
		res.Status.Kind, res.Status.Reason = StatusClosed, "closed"
		return res, nil
	}
	if b, ok := ev.known(t.Visitor); ok {
		// Revoked, or done: no place, no pass, whatever the queue says.
		res.Status.Kind, res.Status.Reason, res.Status.Refresh = StatusClosed, string(b.Reason), time.Minute
		return res, nil
	}
	if t.Number == 0 {
		n, renewed, err := ev.number(ctx, l, &res.Ticket, now)
		if err != nil {
			return res, err
		}
		res.Renewed = renewed
		if n == 0 {
			ev.undrawnStatus(l, &res, st, now)
			return res, nil
		}
	}
	n := res.Ticket.Number
	l.live.mark(n, now)
	serving := l.serving.Load()
	if n > serving {
		if st == StateSoldOut {
			res.Status.Kind = StatusSoldOut
			return res, nil
		}
		res.Status.Kind = StatusWaiting
		if st == StatePaused {
			res.Status.Kind = StatusPaused
		}
		res.Status.Position = int64(n - serving)
		r := l.rates.Load()
		res.Status.ETA = EstimateETA(float64(n-serving), 0, r[0], r[1], r[2])
		res.Status.Refresh = refreshFor(res.Status.Position, r[1])
		return res, nil
	}
	return ev.admit(ctx, l, res, now)
}

// refreshFor paces polls: often near the front, rarely far back.
func refreshFor(ahead int64, rate float64) time.Duration {
	switch {
	case ahead <= 0:
		return time.Second
	case rate > 0 && float64(ahead)/rate < 60:
		return 2 * time.Second
	case rate > 0 && float64(ahead)/rate > 1800:
		return 30 * time.Second
	}
	return DefaultRefresh
}

// number finds the visitor's number once their tranche is drawn. It
// returns 0 while the tranche is not drawn (or not loaded) here yet.
func (ev *event) number(ctx context.Context, l *lane, t *Ticket, now time.Time) (uint64, bool, error) {
	l.mu.RLock()
	d := l.draws[t.Tranche]
	l.mu.RUnlock()
	if d == nil {
		// A later tranche drawn while this one has no record means the
		// leader passed it by as empty: the visitor's join raced its
		// close. The time limit is a backstop for a tranche nobody drew
		// after (a big draw takes seconds, never minutes).
		if l.drawnTo.Load() > int64(t.Tranche) || now.After(trancheCloses(&ev.cfg, t.Tranche).Add(rejoinAfter)) {
			return ev.rejoin(ctx, l, t, now)
		}
		return 0, false, nil
	}
	if d.ordered == nil {
		return 0, false, nil // being loaded
	}
	i := Find(d.draw.Seed, d.ordered, t.Visitor)
	if i < 0 {
		return ev.rejoin(ctx, l, t, now)
	}
	t.Number = d.draw.First + uint64(i)
	return t.Number, true, nil
}

// rejoin puts a visitor whose join did not make it into its tranche's
// draw (it raced the close) into the current tranche, same visitor id.
func (ev *event) rejoin(ctx context.Context, l *lane, t *Ticket, now time.Time) (uint64, bool, error) {
	ev.e.log.Warn("admission: visitor missing from a drawn tranche; placing them in the current one",
		"event", ev.cfg.ID, "lane", l.cfg.Name, "tranche", t.Tranche)
	nt, err := ev.place(ctx, l, t.Visitor, t.Binding, now)
	if err != nil {
		return 0, false, err
	}
	*t = nt
	return 0, true, nil
}

// undrawnStatus answers a visitor whose tranche is not drawn yet.
func (ev *event) undrawnStatus(l *lane, res *StatusResult, st State, now time.Time) {
	drawAt := trancheCloses(&ev.cfg, res.Ticket.Tranche).Add(joinMargin)
	res.Status.DrawAt = drawAt
	res.Status.Kind = StatusWaitingForDraw
	if st == StatePrequeue {
		res.Status.Kind = StatusPrequeue
	}
	if st == StateSoldOut {
		res.Status.Kind = StatusSoldOut
		return
	}
	res.Status.Refresh = min(DefaultRefresh, max(time.Second, drawAt.Sub(now)))
	r := l.rates.Load()
	l.mu.RLock()
	before, mine := 0, l.undrawn[res.Ticket.Tranche]
	for tr, n := range l.undrawn {
		if tr < res.Ticket.Tranche {
			before += n
		}
	}
	l.mu.RUnlock()
	waiting := float64(l.last.Load() - l.serving.Load())
	wait := max(0, drawAt.Sub(now))
	lo := EstimateETA(waiting+float64(before), wait, r[0], r[1], r[2])
	mid := EstimateETA(waiting+float64(before)+float64(mine)/2, wait, r[0], r[1], r[2])
	hi := EstimateETA(waiting+float64(before+mine), wait, r[0], r[1], r[2])
	res.Status.ETA = ETA{Seconds: mid.Seconds, Low: lo.Low, High: hi.High}
}

// admit answers a visitor whose number has been reached: a pass while
// their turn lasts, after a tick's wait if they came after their grace.
func (ev *event) admit(ctx context.Context, l *lane, res StatusResult, now time.Time) (StatusResult, error) {
	n := res.Ticket.Number
	res.Status.Position = 0
	res.Status.ETA = ETA{}
	res.Status.Refresh = time.Second
	grace, session := ev.cfg.NoShowGrace, ev.cfg.SessionDuration
	reachedAt := l.reachedAt(n)
	anchor := reachedAt
	if b, ok := ev.barred(res.Ticket.Visitor); ok {
		// Done here since the last tick: no new pass.
		res.Status.Kind, res.Status.Reason, res.Status.Refresh = StatusClosed, string(b.Reason), time.Minute
		res.Status.Position, res.Status.ETA = -1, ETA{Seconds: -1, Low: -1, High: -1}
		return res, nil
	}
	if ev.shadowed(&res.Ticket.Visitor) {
		// Never admitted: told to wait, as a late visitor is for a tick,
		// until their turn would have ended.
		if !now.Before(reachedAt.Add(grace + session)) {
			res.Status.Kind, res.Status.Reason = StatusClosed, "session_ended"
			res.Status.Refresh = time.Minute
			return res, nil
		}
		res.Status.Kind = StatusWaiting
		return res, nil
	}
	switch {
	case l.claimed.has(n):
	case now.Sub(reachedAt) <= grace:
	default:
		// Came after their grace: were they here before (on another
		// replica)? If not, they get in at the next tick.
		l.lateMu.Lock()
		okAt, ok := l.lateOK[n]
		if !ok {
			if _, waiting := l.late[n]; !waiting {
				l.late[n] = now
			}
		}
		l.lateMu.Unlock()
		if ok {
			anchor = okAt
			break
		}
		claimed, err := ev.e.opts.Store.Claimed(ctx, ev.cfg.ID, l.cfg.Name, n, n)
		if err == nil && len(claimed) == 1 && claimed[0] {
			l.claimed.set(n)
			break
		}
		res.Status.Kind = StatusWaiting
		return res, nil
	}
	until := anchor.Add(grace + session)
	if !now.Before(until) {
		res.Status.Kind, res.Status.Reason = StatusClosed, "session_ended"
		res.Status.Refresh = time.Minute
		return res, nil
	}

	if l.claimed.set(n) {
		if err := ev.e.opts.Store.Claim(ctx, ev.cfg.ID, l.cfg.Name, n); err != nil {
			ev.e.log.Warn("admission: recording a claim failed", "event", ev.cfg.ID, "err", err)
		}
	}
	res.Status.Kind = StatusAdmitted
	res.Pass = &Pass{ID: NewPassIDFor(res.Ticket.Visitor), Event: ev.cfg.ID, Visitor: res.Ticket.Visitor, Lane: l.cfg.Name, Number: n,
		Binding: res.Ticket.Binding, IssuedAt: now, ExpiresAt: minTime(now.Add(session), until)}
	return res, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// reachedAt is when this replica saw the serving counter pass n.
func (l *lane) reachedAt(n uint64) time.Time {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i := sort.Search(len(l.reach), func(i int) bool { return l.reach[i].serving >= n })
	if i == len(l.reach) {
		return l.event.e.clock()
	}
	return l.reach[i].at
}

// Tick runs one tick of every event: the lease, and for the leader the
// draws and the controller; every replica follows the store.
func (e *Engine) Tick(ctx context.Context) error {
	var errs []error
	for _, ev := range e.events {
		if err := ev.tick(ctx, e.clock()); err != nil {
			errs = append(errs, fmt.Errorf("event %s: %w", ev.cfg.ID, err))
		}
	}
	return errors.Join(errs...)
}

// Run ticks every event at its tick interval until ctx ends.
func (e *Engine) Run(ctx context.Context) {
	tick := time.Hour
	for _, ev := range e.events {
		tick = min(tick, ev.cfg.Controller.Tick)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("admission: tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (ev *event) tick(ctx context.Context, now time.Time) error {
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	s := ev.e.opts.Store
	id := ev.cfg.ID
	if c, err := s.Control(ctx, id); err == nil {
		ev.control.Store(&c)
	}
	if rv, err := s.Revocations(ctx, id); err == nil {
		ev.revoked.Store(&rv)
	}
	ev.refreshBars(ctx, now)
	lead, err := s.Lease(ctx, id, ev.e.opts.Replica, leaseTicks*ev.cfg.Controller.Tick)
	if err != nil {
		return err
	}
	if lead && !ev.leader.Load() {
		ev.restored = false // a new leader rescans and restores its controller
		for _, l := range ev.lanes {
			l.scanned = -1
		}
	}
	ev.leader.Store(lead)
	// Follow first: a replica that has just become leader (or restarted)
	// learns the draws and counters already stored before it adds any.
	errs := []error{ev.follow(ctx, now)}
	if lead {
		errs = append(errs, ev.seedAndDraw(ctx, now), ev.regulate(ctx, now))
	}
	ev.releaseLate(now)
	ev.publishFigures(now)
	return errors.Join(errs...)
}

// seedAndDraw gives open tranches their seeds and draws the closed ones.
func (ev *event) seedAndDraw(ctx context.Context, now time.Time) error {
	if now.Before(ev.cfg.QueueOpensAt) {
		return nil
	}
	s := ev.e.opts.Store
	cur := trancheAt(&ev.cfg, now)
	var errs []error
	for _, l := range ev.lanes {
		// Seeds exist from the moment a tranche (and the next one) opens,
		// so that their commitments are published before they close.
		for _, tr := range []int{cur, cur + 1} {
			if _, err := ev.seed(ctx, l, tr); err != nil {
				errs = append(errs, err)
			}
		}
		// Draw every closed tranche after the last drawn or empty one.
		for tr := max(l.scanned, int(l.drawnTo.Load())) + 1; tr < cur; tr++ {
			if now.Before(trancheCloses(&ev.cfg, tr).Add(joinMargin)) {
				break
			}
			members, err := s.Members(ctx, ev.cfg.ID, l.cfg.Name, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if len(members) == 0 {
				l.scanned = tr
				continue
			}
			seed, err := ev.seed(ctx, l, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			ordered := Order(seed, members)
			d := Draw{Tranche: tr, Seed: seed, First: l.last.Load() + 1, Count: uint64(len(ordered)), At: now}
			if err := s.RecordDraw(ctx, ev.cfg.ID, l.cfg.Name, d); err != nil {
				errs = append(errs, err) // another leader raced us: follow() loads its draw
				break
			}
			l.install(d, ordered)
			l.scanned = tr
		}
	}
	return errors.Join(errs...)
}

// seed returns the tranche's seed, proposing a fresh one.
func (ev *event) seed(ctx context.Context, l *lane, tr int) ([]byte, error) {
	proposal := make([]byte, SeedSize)
	if _, err := io.ReadFull(ev.e.opts.Rand, proposal); err != nil {
		return nil, err
	}
	return ev.e.opts.Store.Seed(ctx, ev.cfg.ID, l.cfg.Name, tr, proposal)
}

// install records a draw and its order in memory.
func (l *lane) install(d Draw, ordered []VisitorID) {
	l.live.grow(d.Next())
	l.claimed.grow(d.Next())
	l.skipped.grow(d.Next())
	l.mu.Lock()
	l.draws[d.Tranche] = &drawnTranche{draw: d, ordered: ordered}
	l.drawList = append(l.drawList, d)
	delete(l.undrawn, d.Tranche)
	l.mu.Unlock()
	if d.Next()-1 > l.last.Load() {
		l.last.Store(d.Next() - 1)
	}
	if int64(d.Tranche) > l.drawnTo.Load() {
		l.drawnTo.Store(int64(d.Tranche))
	}
}

// follow brings this replica up to date with the store: draws (with their
// orders), serving counters, member counts of undrawn tranches.
func (ev *event) follow(ctx context.Context, now time.Time) error {
	s := ev.e.opts.Store
	id := ev.cfg.ID
	var errs []error
	for _, l := range ev.lanes {
		draws, err := s.Draws(ctx, id, l.cfg.Name, int(l.drawnTo.Load()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range draws {
			members, err := s.Members(ctx, id, l.cfg.Name, d.Tranche)
			if err != nil {
				errs = append(errs, err)
				break
			}
			ordered := Order(d.Seed, members)
			if uint64(len(ordered)) != d.Count {
				ev.e.log.Error("admission: a tranche's members do not match its draw record",
					"event", id, "lane", l.cfg.Name, "tranche", d.Tranche, "members", len(ordered), "count", d.Count)
			}
			l.install(d, ordered)
		}
		// Member counts of the tranches waiting for their draw (for ETAs).
		cur := trancheAt(&ev.cfg, now)
		counts := map[int]int{}
		for tr := int(l.drawnTo.Load()) + 1; tr <= cur && !now.Before(ev.cfg.QueueOpensAt); tr++ {
			n, err := s.MemberCount(ctx, id, l.cfg.Name, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if n > 0 {
				counts[tr] = n
			}
		}
		l.mu.Lock()
		l.undrawn = counts
		l.mu.Unlock()
	}
	serving, err := s.Serving(ctx, id)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// The estimator only sees selling time: a pause would drag the rate
	// (and so every ETA) down with zeros that say nothing about the pace
	// after it.
	selling := ev.state(now) == StateSelling
	for _, l := range ev.lanes {
		l.observe(serving[l.cfg.Name], now, selling)
	}
	return errors.Join(errs...)
}

// observe notes the lane's serving counter as read now and feeds the rate
// estimator while the event is selling.
func (l *lane) observe(v uint64, now time.Time, selling bool) {
	l.bump(v, now)
	if !selling {
		return
	}
	if !l.estReady {
		l.estSeen, l.estReady = v, true // what came before is history
	}
	advanced := uint64(0)
	if v > l.estSeen {
		advanced = v - l.estSeen
		l.estSeen = v
	}
	l.est.Observe(now, advanced)
	lo, mid, hi := l.est.Rates()
	l.rates.Store(&[3]float64{lo, mid, hi})
}

// bump raises the in-memory serving counter and notes when.
func (l *lane) bump(v uint64, now time.Time) {
	if v > l.serving.Load() {
		l.serving.Store(v)
		l.mu.Lock()
		l.reach = append(l.reach, reached{at: now, serving: v})
		l.mu.Unlock()
	}
}

// regulate runs the controller and raises the serving counters.
func (ev *event) regulate(ctx context.Context, now time.Time) error {
	s := ev.e.opts.Store
	id := ev.cfg.ID
	if !ev.restored {
		if b, err := s.LoadController(ctx, id); err == nil && b != nil {
			if err := ev.ctrl.RestoreState(b); err != nil {
				ev.e.log.Warn("admission: discarding unreadable controller state", "event", id, "err", err)
			}
		}
		ev.restored = true
	}
	st := ev.state(now)
	if st != StateSelling {
		return nil
	}
	var m Measurements
	if ev.e.opts.Meter != nil {
		m = ev.e.opts.Meter.Measure(id, now)
	}
	remaining, known := 0, false
	if ev.e.opts.Inventory != nil && ev.cfg.InventoryEvent != "" {
		remaining, known = ev.e.opts.Inventory.Remaining(ev.cfg.InventoryEvent)
	}
	pending, rate, err := ev.pendingAndNoShows(ctx, now)
	if err != nil {
		return err
	}
	cutoff := now.Add(-time.Minute)
	ev.admits = slices.DeleteFunc(ev.admits, func(a admitted) bool { return !a.at.After(cutoff) })
	last := 0
	for _, a := range ev.admits {
		last += a.n
	}
	out := ev.ctrl.Step(ControllerInput{Now: now, Measurements: m, Pending: pending, NoShowRate: rate,
		Remaining: remaining, RemainingKnown: known, Caps: ev.caps(), AdmittedLastMinute: last})
	f := *ev.figures.Load()
	f.Limit, f.NoShowRate, f.Pending, f.Last, f.Admitted1m = out.Limit, rate, pending, m, last
	ev.figures.Store(&f)
	if out.SoldOut {
		c := *ev.control.Load()
		if !c.SoldOut {
			c.SoldOut = true
			if err := s.SetControl(ctx, id, c); err != nil {
				return err
			}
			ev.control.Store(&c)
		}
		return nil
	}
	if out.Admit > 0 {
		let := 0 // counted against MaxNewPerMinute: arrivals, not no-show inflation
		for l, n := range ev.split(out.Admit) {
			k, err := ev.advance(ctx, l, n, rate, now)
			if err != nil {
				return err
			}
			if k > 0 {
				let += n
			}
		}
		if let > 0 {
			ev.admits = append(ev.admits, admitted{at: now, n: let})
		}
	}
	return s.SaveController(ctx, id, ev.ctrl.MarshalState())
}

// split shares n admissions between the lanes that have visitors waiting:
// priority lanes first, in order, then the rest by share.
func (ev *event) split(n int) map[*lane]int {
	out := map[*lane]int{}
	var shared []*lane
	total := 0.0
	for _, l := range ev.lanes {
		waiting := int(l.last.Load() - l.serving.Load())
		if waiting <= 0 {
			continue
		}
		if l.cfg.Priority {
			k := min(n, waiting)
			out[l] += k
			n -= k
			continue
		}
		shared = append(shared, l)
		total += l.cfg.Share
	}
	// Largest remainder over the shares, then hand what a lane cannot use
	// to the others.
	for n > 0 && len(shared) > 0 {
		given := 0
		for _, l := range shared {
			k := int(math.Round(float64(n) * l.cfg.Share / total))
			k = min(k, int(l.last.Load()-l.serving.Load())-out[l])
			if k > 0 {
				out[l] += k
				given += k
			}
		}
		if given == 0 {
			for _, l := range shared {
				if int(l.last.Load()-l.serving.Load())-out[l] > 0 {
					out[l]++
					given++
					break
				}
			}
		}
		if given == 0 {
			break
		}
		n -= given
		shared = slices.DeleteFunc(shared, func(l *lane) bool { return int(l.last.Load()-l.serving.Load())-out[l] <= 0 })
		total = 0
		for _, l := range shared {
			total += l.cfg.Share
		}
	}
	return out
}

// advance raises a lane's serving counter so that about n visitors who
// are still around get their turn: numbers whose visitor polled before but
// not within the grace are passed over (they count as no-shows at once),
// and the rest is inflated by the measured no-show rate. It returns how
// many numbers were offered.
func (ev *event) advance(ctx context.Context, l *lane, n int, rate float64, now time.Time) (int, error) {
	target := int(math.Ceil(float64(n) / (1 - min(rate, maxNoShowRate))))
	from := l.serving.Load() + 1
	last := l.last.Load()
	limit := uint64(4*target + 100) // never run far ahead on stale liveness
	gone := now.Add(-ev.cfg.NoShowGrace)
	drawnAt := l.drawTimes(from)
	k, offered, skipped := from, 0, 0
	for offered < target && k <= last && k-from < limit {
		// Gone: polled, but not within the grace; or never polled though
		// drawn more than a grace ago (live visitors poll every ≤ 30 s).
		// Shadow visitors take no admission either.
		t, polled := l.live.lastPoll(k)
		if (polled && t.Before(gone)) || (!polled && drawnAt(k).Before(gone)) || l.shadowAt(k) {
			l.skipped.set(k)
			skipped++
		} else {
			offered++
		}
		k++
	}
	to := k - 1
	if to < from {
		return 0, nil
	}
	v, err := ev.e.opts.Store.Advance(ctx, ev.cfg.ID, l.cfg.Name, to)
	if err != nil {
		return 0, err
	}
	l.offers = append(l.offers, offer{at: now, from: from, to: to, skipped: skipped})
	l.bump(v, now) // the estimator sees it at the next follow
	return offered, nil
}

// shadowAt reports whether number n went to a shadow visitor (false when
// the engine has no shadow key or n's draw is not loaded here).
func (l *lane) shadowAt(n uint64) bool {
	if len(l.event.e.opts.ShadowKey) == 0 {
		return false
	}
	l.mu.RLock()
	draws := l.drawList
	i := sort.Search(len(draws), func(i int) bool { return draws[i].Next() > n })
	var v VisitorID
	ok := false
	if i < len(draws) && n >= draws[i].First {
		if d := l.draws[draws[i].Tranche]; d != nil && d.ordered != nil && n-d.draw.First < uint64(len(d.ordered)) {
			v, ok = d.ordered[n-d.draw.First], true
		}
	}
	l.mu.RUnlock()
	return ok && l.event.shadowed(&v)
}

// drawTimes returns a function giving the draw time of numbers ≥ from,
// asked in increasing order.
func (l *lane) drawTimes(from uint64) func(uint64) time.Time {
	l.mu.RLock()
	draws := l.drawList
	l.mu.RUnlock()
	i := sort.Search(len(draws), func(i int) bool { return draws[i].Next() > from })
	return func(n uint64) time.Time {
		for i < len(draws) && draws[i].Next() <= n {
			i++
		}
		if i < len(draws) {
			return draws[i].At
		}
		return time.Now().Add(time.Hour) // not drawn here: never "gone"
	}
}

// pendingAndNoShows measures, from the offers of the last grace period
// and the minute before it: how many offered visitors have not come yet
// (pending), and what share of offers ended as no-shows.
func (ev *event) pendingAndNoShows(ctx context.Context, now time.Time) (int, float64, error) {
	grace := ev.cfg.NoShowGrace
	oldest := now.Add(-grace - noShowWindow)
	pending, offeredOld, claimedOld := 0, 0, 0
	for _, l := range ev.lanes {
		l.offers = slices.DeleteFunc(l.offers, func(o offer) bool { return o.at.Before(oldest) })
		if len(l.offers) == 0 {
			continue
		}
		from, to := l.offers[0].from, l.offers[len(l.offers)-1].to
		claimed, err := ev.e.opts.Store.Claimed(ctx, ev.cfg.ID, l.cfg.Name, from, to)
		if err != nil {
			return 0, 0, err
		}
		for _, o := range l.offers {
			offered, came := 0, 0
			for k := o.from; k <= o.to; k++ {
				c := claimed[k-from]
				if c {
					l.claimed.set(k)
				}
				if l.skipped.has(k) {
					continue
				}
				offered++
				if c {
					came++
				}
			}
			if now.Sub(o.at) <= grace {
				pending += offered - came
			} else {
				offeredOld += offered
				claimedOld += came
			}
		}
	}
	rate := 0.0
	if offeredOld >= 20 {
		rate = float64(offeredOld-claimedOld) / float64(offeredOld)
	}
	return pending, rate, nil // the controller discounts pending by the rate
}

// releaseLate admits, at this tick, the visitors who came after their
// grace since the last one.
func (ev *event) releaseLate(now time.Time) {
	for _, l := range ev.lanes {
		l.lateMu.Lock()
		for n := range l.late {
			l.lateOK[n] = now
		}
		clear(l.late)
		for n, at := range l.lateOK {
			if now.Sub(at) > ev.cfg.NoShowGrace+ev.cfg.SessionDuration {
				delete(l.lateOK, n)
			}
		}
		l.lateMu.Unlock()
	}
}

func (ev *event) publishFigures(now time.Time) {
	f := *ev.figures.Load()
	f.State, f.Leader = ev.state(now), ev.leader.Load()
	f.Lanes = make(map[string]LaneFigures, len(ev.lanes))
	for _, l := range ev.lanes {
		r := l.rates.Load()
		l.mu.RLock()
		undrawn := 0
		for _, n := range l.undrawn {
			undrawn += n
		}
		l.mu.RUnlock()
		serving, last := l.serving.Load(), l.last.Load()
		f.Lanes[l.cfg.Name] = LaneFigures{Serving: serving, Drawn: last, Waiting: last - min(last, serving),
			Undrawn: undrawn, RateLow: r[0], RateMid: r[1], RateHigh: r[2]}
	}
	ev.figures.Store(&f)
}

// Figures returns an event's live figures (as of its last tick).
func (e *Engine) Figures(id string) Figures {
	ev, err := e.event(id)
	if err != nil {
		return Figures{}
	}
	return *ev.figures.Load()
}

// Audit returns the public record of a lane's tranche: the seed's
// commitment, and once drawn the seed and a page of SHA-256(visitor id)
// in drawn order.
func (e *Engine) Audit(ctx context.Context, id, laneName string, tranche, offset, limit int) (DrawAudit, error) {
	ev, err := e.event(id)
	if err != nil {
		return DrawAudit{}, err
	}
	l := ev.byName[laneName]
	if l == nil {
		return DrawAudit{}, fmt.Errorf("%w: %q", ErrUnknownLane, laneName)
	}
	now := e.clock()
	if tranche < 0 || tranche > trancheAt(&ev.cfg, now)+1 || now.Before(ev.cfg.QueueOpensAt) {
		return DrawAudit{}, ErrNotDrawnYet
	}
	a := DrawAudit{Event: id, Lane: laneName, Tranche: tranche, Offset: offset}
	l.mu.RLock()
	d := l.draws[tranche]
	l.mu.RUnlock()
	if d == nil || d.ordered == nil {
		seed, err := ev.seed(ctx, l, tranche)
		if err != nil {
			return DrawAudit{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		a.Commitment = Commitment(seed)
		return a, nil
	}
	a.Commitment, a.Drawn, a.Seed, a.First, a.Count = Commitment(d.draw.Seed), true, d.draw.Seed, d.draw.First, d.draw.Count
	if offset < 0 {
		offset = 0
	}
	end := min(len(d.ordered), offset+max(0, limit))
	for i := offset; i < end; i++ {
		a.Hashes = append(a.Hashes, VisitorHash(d.ordered[i]))
	}
	return a, nil
}

// Revoke bars a pass until its expiry, on every replica within a tick.
func (e *Engine) Revoke(ctx context.Context, id, passID string, until time.Time) error {
	ev, err := e.event(id)
	if err != nil {
		return err
	}
	if err := e.opts.Store.Revoke(ctx, id, passID, until); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	rv := maps.Clone(*ev.revoked.Load())
	rv[passID] = until
	ev.revoked.Store(&rv)
	return nil
}

// Revoked reports whether a pass is revoked.
func (e *Engine) Revoked(id, passID string) bool {
	ev := e.events[id]
	if ev == nil {
		return false
	}
	until, ok := (*ev.revoked.Load())[passID]
	return ok && e.clock().Before(until)
}

// SetControl stores an operator's overrides; every replica follows within
// a tick.
func (e *Engine) SetControl(ctx context.Context, id string, c Control) error {
	ev, err := e.event(id)
	if err != nil {
		return err
	}
	if err := e.opts.Store.SetControl(ctx, id, c); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.control.Store(&c)
	return nil
}

// UpdateControl changes an operator's overrides in one read-modify-write:
// fn gets the current control and edits it; the result is stored as by
// SetControl and returned. Concurrent updates of one event on this
// replica are serialised, so "pause" and "set caps" do not undo each
// other.
func (e *Engine) UpdateControl(ctx context.Context, id string, fn func(c *Control)) (Control, error) {
	ev, err := e.event(id)
	if err != nil {
		return Control{}, err
	}
	ev.controlMu.Lock()
	defer ev.controlMu.Unlock()
	c := *ev.control.Load()
	if c.Caps != nil {
		caps := *c.Caps
		c.Caps = &caps
	}
	fn(&c)
	if err := e.opts.Store.SetControl(ctx, id, c); err != nil {
		return Control{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.control.Store(&c)
	return c, nil
}

// Control returns an event's current operator overrides.
func (e *Engine) Control(id string) (Control, error) {
	ev, err := e.event(id)
	if err != nil {
		return Control{}, err
	}
	return *ev.control.Load(), nil
}

// Config returns an event's configuration, defaults filled in.
func (e *Engine) Config(id string) (EventConfig, error) {
	ev, err := e.event(id)
	if err != nil {
		return EventConfig{}, err
	}
	return ev.cfg, nil
}

// Lease returns how long an event's leadership lasts without renewal: a
// leader that dies is replaced within it (0 for an unknown event).
func (e *Engine) Lease(id string) time.Duration {
	ev, err := e.event(id)
	if err != nil {
		return 0
	}
	return leaseTicks * ev.cfg.Controller.Tick
}

// Events lists the configured events' ids.
func (e *Engine) Events() []string {
	ids := make([]string, 0, len(e.events))
	for id := range e.events {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
