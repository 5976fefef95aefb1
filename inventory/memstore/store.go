package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/fsutil"
	"github.com/waitroom/waitroom/internal/journal"

	"github.com/waitroom/waitroom/inventory"
)

// Defaults of Options.
const (
	DefaultSnapshotEvery  = 50_000
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultHoldRetention  = time.Hour
)

// Options configure a Store.
type Options struct {
	// Dir holds the journals and snapshots; it is created if missing and
	// locked against a second process.
	Dir string
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// SnapshotEvery is how many records an event's journal gains between
	// snapshots (which only speed up start-up).
	SnapshotEvery int
	// IdempotencyTTL is how long an idempotency key is remembered.
	IdempotencyTTL time.Duration
	// HoldRetention is how long a released or expired hold can still be
	// read; confirmed holds are kept as long as their order.
	HoldRetention time.Duration
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
}

// Store is the embedded inventory store: all state in memory, every change
// made durable in a per-event journal before it is acknowledged. It is
// safe for concurrent use; one event's operations are serialised, events
// run in parallel.
type Store struct {
	opts   Options
	unlock func() error

	mu     sync.RWMutex
	events map[string]*slot
	closed bool

	// syncers make the journals' group commits durable, one taken per
	// batch: kernel AIO contexts are bounded by the syncs in flight, not
	// by the number of events.
	syncers *fsutil.SyncerPool
}

// maxIdleSyncers is how many fsync contexts are kept between batches:
// about as many events as commit at the same moment.
const maxIdleSyncers = 16

// slot is one event with its lock and journal.
type slot struct {
	mu      sync.Mutex
	ev      *event
	dir     string
	j       *journal.Journal
	buf     []byte // reused to encode records (the journal copies them)
	records int    // since the last snapshot
	// snapOffset and snapSize are the last snapshot's journal offset and
	// encoded size (set by the goroutine that writes it).
	snapOffset int64
	snapSize   atomic.Int64
	snap       atomic.Bool // a snapshot is being written
	snapWG     sync.WaitGroup
}

// Open loads every event found in opts.Dir.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("memstore: a data directory is required")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if opts.IdempotencyTTL <= 0 {
		opts.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if opts.HoldRetention <= 0 {
		opts.HoldRetention = DefaultHoldRetention
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "events"), 0o700); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	unlock, err := fsutil.LockDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	s := &Store{opts: opts, unlock: unlock, events: map[string]*slot{}, syncers: fsutil.NewSyncerPool(maxIdleSyncers)}
	entries, err := os.ReadDir(filepath.Join(opts.Dir, "events"))
	if err != nil {
		unlock()
		return nil, fmt.Errorf("memstore: %w", err)
	}
	for _, ent := range entries {
		if !ent.IsDir() || !inventory.ValidEventID(ent.Name()) {
			continue
		}
		sl, err := s.load(ent.Name())
		if err != nil {
			s.Close()
			return nil, err
		}
		if sl != nil {
			s.events[ent.Name()] = sl
		}
	}
	return s, nil
}

// load recovers one event from its snapshot and journal.
func (s *Store) load(id string) (*slot, error) {
	dir := filepath.Join(s.opts.Dir, "events", id)
	ev, start, err := readSnapshot(dir, id)
	if err != nil {
		return nil, err
	}
	var replayErr error
	j, err := openJournal(filepath.Join(dir, "journal"), start, s.syncers, func(_, _ int64, payload []byte) error {
		var r record
		if err := json.Unmarshal(payload, &r); err != nil {
			replayErr = fmt.Errorf("memstore: event %s: bad journal record: %w", id, err)
			return replayErr
		}
		if ev == nil {
			if r.Op != opDefine {
				replayErr = fmt.Errorf("memstore: event %s: journal does not start with a definition", id)
				return replayErr
			}
			ev = newEvent(id)
		}
		ev.apply(&r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if replayErr != nil {
		j.Close()
		return nil, replayErr
	}
	if ev == nil { // created but never defined: nothing was acknowledged
		j.Close()
		return nil, nil
	}
	return &slot{ev: ev, dir: dir, j: j}, nil
}

// Close makes everything durable, writes a snapshot of each event and
// releases the data directory.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	events := s.events
	s.mu.Unlock()
	var errs []error
	for _, sl := range events {
		sl.mu.Lock()
		sl.snapWG.Wait()
		if sl.j.Err() == nil && sl.records > 0 {
			f := sl.capture()
			if err := sl.j.Barrier().Wait(context.Background()); err == nil {
				errs = append(errs, writeSnapshot(sl.dir, f))
			}
		}
		errs = append(errs, sl.j.Close())
		sl.mu.Unlock()
	}
	errs = append(errs, s.syncers.Close())
	if s.unlock != nil {
		errs = append(errs, s.unlock())
	}
	return errors.Join(errs...)
}

func (s *Store) now() int64 { return s.opts.Clock().UnixMilli() }

// slot returns an event's slot or ErrEventNotFound.
func (s *Store) slot(id string) (*slot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, inventory.ErrUnavailable
	}
	sl := s.events[id]
	if sl == nil {
		return nil, inventory.Errorf(inventory.ErrEventNotFound, "event %q is not defined", id)
	}
	return sl, nil
}

// tx runs fn with the event locked after expiring every due hold, then
// waits until every change it saw or made is durable.
func (s *Store) tx(ctx context.Context, id string, fn func(t *txn) error) error {
	return s.run(ctx, id, -1, func(t *txn) error {
		if err := defined(t.e); err != nil {
			return err
		}
		return fn(t)
	})
}

// run is tx with a bound on how many due holds are expired first (-1: all).
func (s *Store) run(ctx context.Context, id string, maxExpire int, fn func(t *txn) error) error {
	if !inventory.ValidEventID(id) {
		return inventory.Errorf(inventory.ErrEventNotFound, "event %q is not defined", id)
	}
	sl, err := s.slot(id)
	if err != nil {
		return err
	}
	sl.mu.Lock()
	if err := sl.j.Err(); err != nil {
		sl.mu.Unlock()
		return s.unavailable(err)
	}
	t := &txn{s: s, sl: sl, e: sl.ev, now: s.now()}
	t.expired = t.expire(maxExpire)
	t.e.prune(t.now, s.opts.HoldRetention.Milliseconds(), s.opts.IdempotencyTTL.Milliseconds())
	if t.err == nil {
		err = fn(t)
	}
	if t.err != nil {
		err = t.err
	}
	b := sl.j.Barrier()
	sl.maybeSnapshot(s)
	sl.mu.Unlock()
	if werr := b.Wait(ctx); werr != nil {
		if errors.Is(werr, context.Canceled) || errors.Is(werr, context.DeadlineExceeded) {
			return werr
		}
		return s.unavailable(werr)
	}
	return err
}

// unavailable logs a storage failure and returns what the client sees.
func (s *Store) unavailable(err error) error {
	s.opts.Logger.Error("memstore: storage failure", "err", err)
	return &inventory.Error{Kind: inventory.ErrUnavailable, Message: "the store cannot make changes durable"}
}

// txn is one locked step on an event.
type txn struct {
	s       *Store
	sl      *slot
	e       *event
	now     int64
	expired int   // holds expired before fn ran
	err     error // sticky journal failure
}

// commit journals a record and applies it.
func (t *txn) commit(r *record) {
	if t.err != nil {
		return
	}
	payload, err := appendRecord(t.sl.buf[:0], r)
	if err != nil {
		t.err = fmt.Errorf("memstore: encoding record: %w", err)
		return
	}
	t.sl.buf = payload
	if _, _, err := t.sl.j.Append(payload); err != nil {
		t.err = t.s.unavailable(err)
		return
	}
	t.e.apply(r)
	t.sl.records++
}

// expire journals and applies the expiry of up to max due holds.
func (t *txn) expire(max int) int {
	recs := t.e.due(t.now, max)
	for _, r := range recs {
		t.commit(r)
	}
	return len(recs)
}

// remember stores an outcome that changed nothing under its key.
func (t *txn) remember(key, fp string, res *idemResult) {
	if key != "" {
		t.commit(&record{Op: opIdem, At: t.now, Key: key, FP: fp, Res: res})
	}
}

// hold and order look a record up by id.
func (t *txn) hold(id string) (*hold, error) {
	if h := t.e.holds[id]; h != nil {
		return h, nil
	}
	return nil, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", id)
}

func (t *txn) order(id string) (*order, error) {
	if o := t.e.orders[id]; o != nil {
		return o, nil
	}
	return nil, inventory.Errorf(inventory.ErrOrderNotFound, "order %q does not exist", id)
}

// replay returns a remembered outcome for key, or nil.
func (t *txn) replay(key, fp string) (*idemResult, error) {
	if key == "" {
		return nil, nil
	}
	r := t.e.idem[key]
	if r == nil {
		return nil, nil
	}
	if r.FP != fp {
		return nil, inventory.Errorf(inventory.ErrIdempotencyMismatch, "idempotency key %q was used for a different request", key)
	}
	if r.Res.Err != nil {
		return r.Res, r.Res.Err.err()
	}
	return r.Res, nil
}

// PutEvent implements inventory.Store.
func (s *Store) PutEvent(ctx context.Context, id string, def inventory.EventDef, actor string) (inventory.Event, error) {
	def, err := inventory.PrepareEvent(id, def, actor)
	if err != nil {
		return inventory.Event{}, err
	}
	if err := s.create(id); err != nil {
		return inventory.Event{}, err
	}
	var out inventory.Event
	err = s.run(ctx, id, -1, func(t *txn) error {
		if t.e.secByID != nil || t.e.poolByID != nil {
			if seats, pools := t.e.conflicts(&def); len(seats) > 0 || len(pools) > 0 {
				if len(seats) > 100 {
					seats = seats[:100]
				}
				return &inventory.Error{Kind: inventory.ErrDefinitionConflict, Seats: seats, Pools: pools,
					Message: "the new definition drops or shrinks below seats or GA places that are held or sold"}
			}
		}
		t.commit(&record{Op: opDefine, At: t.now, Actor: actor, Def: &def})
		out = t.e.eventView()
		return nil
	})
	return out, err
}

// create makes the slot of a new event, with an empty journal.
func (s *Store) create(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return inventory.ErrUnavailable
	}
	if s.events[id] != nil {
		return nil
	}
	dir := filepath.Join(s.opts.Dir, "events", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.opts.Logger.Error("memstore: creating event directory", "event", id, "err", err)
		return s.unavailable(err)
	}
	if err := fsutil.SyncDir(filepath.Dir(dir)); err != nil {
		return s.unavailable(err)
	}
	j, err := openJournal(filepath.Join(dir, "journal"), 0, s.syncers, nil)
	if err != nil {
		return s.unavailable(err)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		j.Close()
		return s.unavailable(err)
	}
	s.events[id] = &slot{ev: newEvent(id), dir: dir, j: j}
	return nil
}

// Event implements inventory.Store.
func (s *Store) Event(ctx context.Context, id string) (inventory.Event, error) {
	var out inventory.Event
	err := s.tx(ctx, id, func(t *txn) error {
		out = t.e.eventView()
		return nil
	})
	return out, err
}

// Events implements inventory.Store.
func (s *Store) Events(ctx context.Context) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.events))
	for id, sl := range s.events {
		sl.mu.Lock()
		defined := sl.ev.secByID != nil
		sl.mu.Unlock()
		if defined {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Hold implements inventory.Store.
func (s *Store) Hold(ctx context.Context, id string, req inventory.HoldRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	var out inventory.Hold
	err := s.tx(ctx, id, func(t *txn) error {
		var fp string
		if req.IdempotencyKey != "" {
			fp = req.Fingerprint()
			if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
				if res != nil && res.Hold != nil {
					out = *res.Hold
					out.Replayed = true
				}
				return err
			}
		}
		r, err := t.decideHold(&req)
		if err != nil {
			if recordable(err) {
				t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			}
			return err
		}
		h := inventory.Hold{ID: r.Hold, Event: id, User: r.User, Seats: r.Seats, Pool: r.Pool, Quantity: r.Qty,
			PriceCents: r.Price, CreatedAt: inventory.UnixMilli(r.At), ExpiresAt: inventory.UnixMilli(r.Expires),
			Status: inventory.HoldHeld}
		if h.Seats == nil {
			h.Seats = []string{}
		}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Hold: &h}
		}
		t.commit(r)
		out = h
		return nil
	})
	return out, err
}

func defined(e *event) error {
	if e.secByID == nil {
		return inventory.Errorf(inventory.ErrEventNotFound, "event %q is not defined", e.id)
	}
	return nil
}

// decideHold works out what a hold request gets, or why it gets nothing.
// The order of checks is part of the contract that the Redis scripts
// share: unknown targets, then the user limit, then availability.
func (t *txn) decideHold(req *inventory.HoldRequest) (*record, error) {
	e := t.e
	var (
		seats []string
		qty   int
		price int64
		secs  []*section
		p     *pool
	)
	switch {
	case req.Seats != nil:
		var unknown []string
		for _, sid := range req.Seats {
			s, _, _, ok := e.seat(sid)
			if !ok {
				unknown = append(unknown, sid)
				continue
			}
			price += s.def.PriceCents
		}
		if len(unknown) > 0 {
			return nil, &inventory.Error{Kind: inventory.ErrSeatNotFound, Seats: unknown, Message: "no such seat"}
		}
		qty = len(req.Seats)
	case req.Best != nil:
		if req.Best.Section != "" {
			s := e.secByID[req.Best.Section]
			if s == nil {
				return nil, inventory.Errorf(inventory.ErrSectionNotFound, "section %q is not defined", req.Best.Section)
			}
			secs = []*section{s}
		} else {
			secs = e.tiers[req.Best.Tier]
			if len(secs) == 0 {
				return nil, inventory.Errorf(inventory.ErrTierNotFound, "no section has tier %q", req.Best.Tier)
			}
		}
		qty = req.Best.Quantity
	default:
		p = e.poolByID[req.GA.Pool]
		if p == nil {
			return nil, inventory.Errorf(inventory.ErrPoolNotFound, "GA pool %q is not defined", req.GA.Pool)
		}
		qty = req.GA.Quantity
	}

	if limit := e.def.Limits.PerUser; limit > 0 && e.users[req.User]+qty > limit {
		return nil, &inventory.Error{Kind: inventory.ErrUserLimit, Limit: limit, Current: e.users[req.User],
			Message: fmt.Sprintf("user may have at most %d seats in this event", limit)}
	}

	switch {
	case req.Seats != nil:
		var taken []string
		for _, sid := range req.Seats {
			_, r, k, _ := e.seat(sid)
			if r.st[k] != seatFree {
				taken = append(taken, sid)
			}
		}
		if len(taken) > 0 {
			return nil, &inventory.Error{Kind: inventory.ErrSeatUnavailable, Seats: taken, Message: "seats are held or sold"}
		}
		seats = req.Seats
	case secs != nil:
		rows := make([][][]byte, len(secs))
		free := 0
		for i, s := range secs {
			rows[i] = make([][]byte, len(s.rows))
			for j, r := range s.rows {
				rows[i][j] = r.st
			}
			free += s.total - s.held - s.sold
		}
		b, ok := inventory.BestBlock(rows, qty)
		if !ok {
			return nil, notEnough(free, qty)
		}
		s := secs[b.Section]
		r := s.rows[b.Row]
		seats = make([]string, qty)
		for i := range qty {
			seats[i] = inventory.SeatID(s.def.ID, r.id, b.Start+i+1)
		}
		price = s.def.PriceCents * int64(qty)
	default:
		free := p.def.Capacity - p.held - p.sold
		if free < qty {
			return nil, notEnough(free, qty)
		}
		price = p.def.PriceCents * int64(qty)
	}
	r := &record{Op: opHold, At: t.now, Actor: req.Actor, Hold: inventory.NewID(inventory.HoldIDPrefix),
		User: req.User, Seats: seats, Qty: qty, Price: price,
		Expires: t.now + req.TTLFor(&e.def).Milliseconds()}
	if p != nil {
		r.Pool = p.def.ID
	}
	return r, nil
}

func notEnough(free, qty int) error {
	if free == 0 {
		return inventory.Errorf(inventory.ErrSoldOut, "nothing is available")
	}
	return &inventory.Error{Kind: inventory.ErrNotEnoughSeats, Available: free,
		Message: fmt.Sprintf("%d together are not available", qty)}
}

// GetHold implements inventory.Store.
func (s *Store) GetHold(ctx context.Context, id, holdID string) (inventory.Hold, error) {
	var out inventory.Hold
	err := s.tx(ctx, id, func(t *txn) error {
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		out = t.e.holdView(h)
		return nil
	})
	return out, err
}

// Confirm implements inventory.Store.
func (s *Store) Confirm(ctx context.Context, id, holdID string, req inventory.ConfirmRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		fp := req.Fingerprint(holdID)
		if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
			if res != nil && res.Order != nil {
				out = *res.Order
				out.Replayed = true
			}
			return err
		}
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		switch h.Status {
		case inventory.HoldConfirmed:
			o := t.e.orders[h.Order]
			if o.Status == inventory.OrderCancelled {
				err = inventory.Errorf(inventory.ErrOrderCancelled, "the order of this hold was cancelled")
				break
			}
			out = t.e.orderView(o)
			t.remember(req.IdempotencyKey, fp, &idemResult{Order: &out})
			return nil
		case inventory.HoldReleased:
			err = inventory.Errorf(inventory.ErrHoldReleased, "the hold was released")
		case inventory.HoldExpired:
			err = inventory.Errorf(inventory.ErrHoldExpired, "the hold expired at %s", inventory.UnixMilli(h.Expires).Format(time.RFC3339))
		}
		if err != nil {
			t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			return err
		}
		r := &record{Op: opConfirm, At: t.now, Actor: req.Actor, Hold: h.ID, Order: inventory.NewID(inventory.OrderIDPrefix),
			User: h.User, Seats: h.Seats, Pool: h.Pool, Qty: h.Qty, Price: h.Price, PayRef: req.PaymentRef}
		o := inventory.Order{ID: r.Order, HoldID: h.ID, Event: id, User: h.User, Seats: t.e.holdView(h).Seats,
			Pool: h.Pool, Quantity: h.Qty, PriceCents: h.Price, PaymentRef: req.PaymentRef,
			Status: inventory.OrderConfirmed, ConfirmedAt: inventory.UnixMilli(t.now)}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Order: &o}
		}
		t.commit(r)
		out = o
		return nil
	})
	return out, err
}

// Release implements inventory.Store.
func (s *Store) Release(ctx context.Context, id, holdID string, req inventory.ReleaseRequest) (inventory.Release, error) {
	if err := req.Validate(); err != nil {
		return inventory.Release{}, err
	}
	var out inventory.Release
	err := s.tx(ctx, id, func(t *txn) error {
		fp := req.Fingerprint(holdID)
		if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
			if res != nil && res.Release != nil {
				out = *res.Release
				out.Replayed = true
			}
			return err
		}
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		switch h.Status {
		case inventory.HoldConfirmed:
			err := inventory.Errorf(inventory.ErrHoldConfirmed, "the hold is confirmed; cancel its order instead")
			t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			return err
		case inventory.HoldReleased, inventory.HoldExpired:
			out = inventory.Release{HoldID: h.ID, Event: id, Status: "released", HoldStatus: h.Status}
			t.remember(req.IdempotencyKey, fp, &idemResult{Release: &out})
			return nil
		}
		out = inventory.Release{HoldID: h.ID, Event: id, Status: "released", HoldStatus: inventory.HoldReleased}
		r := &record{Op: opRelease, At: t.now, Actor: req.Actor, Hold: h.ID, User: h.User, Seats: h.Seats,
			Pool: h.Pool, Qty: h.Qty}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Release: &out}
		}
		t.commit(r)
		return nil
	})
	return out, err
}

// Cancel implements inventory.Store.
func (s *Store) Cancel(ctx context.Context, id, orderID string, req inventory.CancelRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		o, err := t.order(orderID)
		if err != nil {
			return err
		}
		if o.Status == inventory.OrderConfirmed {
			t.commit(&record{Op: opCancel, At: t.now, Actor: req.Actor, Hold: o.Hold, Order: o.ID, User: o.User,
				Seats: o.Seats, Pool: o.Pool, Qty: o.Qty, Reason: req.Reason})
		}
		out = t.e.orderView(t.e.orders[orderID]) // commit replaced the order (copy-on-write)
		return nil
	})
	return out, err
}

// GetOrder implements inventory.Store.
func (s *Store) GetOrder(ctx context.Context, id, orderID string) (inventory.Order, error) {
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		o, err := t.order(orderID)
		if err != nil {
			return err
		}
		out = t.e.orderView(o)
		return nil
	})
	return out, err
}

// Availability implements inventory.Store.
func (s *Store) Availability(ctx context.Context, id string) (inventory.Availability, error) {
	var out inventory.Availability
	err := s.tx(ctx, id, func(t *txn) error {
		out = t.e.availability()
		return nil
	})
	return out, err
}

// SeatMap implements inventory.Store.
func (s *Store) SeatMap(ctx context.Context, id, sectionID string) (inventory.SeatMap, error) {
	var out inventory.SeatMap
	err := s.tx(ctx, id, func(t *txn) error {
		sec := t.e.secByID[sectionID]
		if sec == nil {
			return inventory.Errorf(inventory.ErrSectionNotFound, "section %q is not defined", sectionID)
		}
		out = inventory.SeatMap{Event: id, Section: sectionID, Seats: make([]inventory.SeatState, 0, sec.total)}
		for _, r := range sec.rows {
			for k, c := range r.st {
				st := inventory.SeatAvailable
				switch c {
				case seatHeld:
					st = inventory.SeatHeld
				case seatSold:
					st = inventory.SeatSold
				}
				out.Seats = append(out.Seats, inventory.SeatState{ID: inventory.SeatID(sectionID, r.id, k+1), Status: st})
			}
		}
		return nil
	})
	return out, err
}

// Ping implements inventory.Store: it fails once the store is closed or
// any event's journal has failed to write.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return inventory.Errorf(inventory.ErrUnavailable, "the store is closed")
	}
	for id, sl := range s.events {
		if err := sl.j.Err(); err != nil {
			return &inventory.Error{Kind: inventory.ErrUnavailable, Message: "the journal of event " + id + " failed"}
		}
	}
	return ctx.Err()
}

// Reap implements inventory.Store.
func (s *Store) Reap(ctx context.Context, id string, max int) (int, error) {
	if max <= 0 {
		max = inventory.DefaultReapBatch
	}
	n := 0
	err := s.run(ctx, id, max, func(t *txn) error {
		n = t.expired
		return defined(t.e)
	})
	return n, err
}

// Audit implements inventory.Store. Cursors are journal offsets.
func (s *Store) Audit(ctx context.Context, id, after string, limit int) (inventory.AuditPage, error) {
	if limit <= 0 {
		limit = inventory.DefaultAuditPage
	}
	limit = min(limit, inventory.MaxAuditPage)
	var off int64
	if after != "" {
		v, err := strconv.ParseInt(after, 10, 64)
		if err != nil || v < 0 {
			return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
		}
		off = v
	}
	sl, err := s.slot(id)
	if err != nil {
		return inventory.AuditPage{}, err
	}
	// Wait until what exists now is durable, then read the durable prefix.
	if err := s.tx(ctx, id, func(*txn) error { return nil }); err != nil {
		return inventory.AuditPage{}, err
	}
	page := inventory.AuditPage{Event: id, Entries: []inventory.AuditEntry{}, Next: strconv.FormatInt(off, 10)}
	var decodeErr error
	err = sl.j.ReadFrom(off, func(end int64, payload []byte) bool {
		var r record
		if decodeErr = json.Unmarshal(payload, &r); decodeErr != nil {
			return false
		}
		page.Next = strconv.FormatInt(end, 10)
		if ent, ok := r.auditEntry(); ok {
			ent.ID = page.Next
			page.Entries = append(page.Entries, ent)
		}
		return len(page.Entries) < limit
	})
	if errors.Is(err, errBadCursor) {
		return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
	}
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return inventory.AuditPage{}, s.unavailable(err)
	}
	return page, nil
}

var _ inventory.Store = (*Store)(nil)
