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

var _ inventory.Store = (*Store)(nil)
