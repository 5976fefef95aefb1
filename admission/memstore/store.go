package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// FlushInterval is how often batched changes (claims, controller state)
// are written.
const FlushInterval = time.Second

// MaxNumber is the largest queue number Claim accepts (the largest bit
// offset of a Redis bitmap, so that both stores agree).
const MaxNumber = 1<<32 - 1

// maxClaimedSpan bounds how many numbers one Claimed call answers for; a
// larger span is almost surely an underflow in the caller.
const maxClaimedSpan = 1 << 30

// Options configure a Store.
type Options struct {
	// Dir holds the member files and state files; it is created if
	// missing and locked against a second process.
	Dir string
	// Clock returns the current time, against which revocations and
	// invite uses run out; time.Now when nil (the simulator passes its
	// fake clock).
	Clock func() time.Time
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
}

// Store is the embedded admission store. It is safe for concurrent use
// within one process; the data directory is locked against others.
type Store struct {
	opts   Options
	unlock func() error

	life   sync.RWMutex // every operation holds it for reading; Close for writing
	closed bool

	emu    sync.Mutex
	events map[string]*event

	// syncers serve the member logs' committers, which come and go with
	// the load: a kernel AIO context is reused, not made per burst.
	syncers *fsutil.SyncerPool

	stop    chan struct{}
	flushed chan struct{}
}

// maxIdleSyncers is how many fsync contexts the member logs keep between
// bursts: about as many tranches as are written at once.
const maxIdleSyncers = 4

var errClosed = fmt.Errorf("memstore: %w: store closed", admission.ErrStoreDown)

// Open locks opts.Dir and loads every event found in it.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("memstore: a data directory is required")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	root := filepath.Join(opts.Dir, "events")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	unlock, err := fsutil.LockDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	s := &Store{opts: opts, unlock: unlock, events: map[string]*event{},
		syncers: fsutil.NewSyncerPool(maxIdleSyncers), stop: make(chan struct{}), flushed: make(chan struct{})}
	if err := s.load(root); err != nil {
		unlock()
		return nil, err
	}
	go s.flusher()
	return s, nil
}

// load reads every event directory. Directory entries made before a
// crash may still be only in the page cache, so each directory is
// fsynced once.
func (s *Store) load(root string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	for _, ent := range entries {
		name, ok := unescape(ent.Name())
		if !ent.IsDir() || !ok {
			continue
		}
		e := newEvent(s, name)
		e.dirReady = true
		if err := e.loadState(); err != nil {
			return err
		}
		files, err := os.ReadDir(e.dir)
		if err != nil {
			return fmt.Errorf("memstore: %w", err)
		}
		for _, f := range files {
			t, ok := parseMemberFile(f.Name())
			if !ok {
				continue
			}
			if _, err := e.openMembers(t); err != nil {
				return fmt.Errorf("memstore: event %q: %w", name, err)
			}
		}
		if err := fsutil.SyncDir(e.dir); err != nil {
			return fmt.Errorf("memstore: %w", err)
		}
		s.events[name] = e
	}
	if err := fsutil.SyncDir(root); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return nil
}

// parseMemberFile reads "<lane>.<tranche>.members".
func parseMemberFile(name string) (trancheKey, bool) {
	base, ok := strings.CutSuffix(name, ".members")
	if !ok {
		return trancheKey{}, false
	}
	lane, num, ok := strings.Cut(base, ".")
	if !ok {
		return trancheKey{}, false
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return trancheKey{}, false
	}
	l, ok := unescape(lane)
	return trancheKey{l, n}, ok
}

// flusher writes batched changes every FlushInterval.
func (s *Store) flusher() {
	defer close(s.flushed)
	tick := time.NewTicker(FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		for _, e := range s.eventList() {
			e.mu.Lock()
			lazy := e.lazy
			e.mu.Unlock()
			if lazy {
				e.persist(context.Background(), 0, true) // an error is logged and retried next time
			}
		}
	}
}

func (s *Store) eventList() []*event {
	s.emu.Lock()
	defer s.emu.Unlock()
	out := make([]*event, 0, len(s.events))
	for _, e := range s.events {
		out = append(out, e)
	}
	return out
}

// Close writes what is batched, waits for writes in flight and releases
// the data directory. Operations after Close fail with an error wrapping
// admission.ErrStoreDown.
func (s *Store) Close() error {
	s.life.Lock()
	if s.closed {
		s.life.Unlock()
		return nil
	}
	s.closed = true
	s.life.Unlock()
	close(s.stop)
	<-s.flushed
	var errs []error
	for _, e := range s.eventList() {
		e.mu.Lock()
		dirty, gen := e.lazy, e.gen
		e.mu.Unlock()
		errs = append(errs, e.persist(context.Background(), gen, dirty))
		e.wg.Wait()
		e.mmu.Lock()
		for _, l := range e.tranches {
			errs = append(errs, l.close())
		}
		e.mmu.Unlock()
	}
	errs = append(errs, s.syncers.Close(), s.unlock())
	return errors.Join(errs...)
}

func (s *Store) now() int64 { return s.opts.Clock().UnixMilli() }

// enter starts an operation: it fails once the store is closed, and
// Close waits for the operations that entered. Every enter is paired with
// s.life.RUnlock.
func (s *Store) enter(event string) error {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return errClosed
	}
	if event == "" {
		s.life.RUnlock()
		return errors.New("memstore: empty event id")
	}
	return nil
}

// event returns an event's state, creating it (in memory) when create is
// set; otherwise nil when the event has none.
func (s *Store) event(name string, create bool) *event {
	s.emu.Lock()
	defer s.emu.Unlock()
	e := s.events[name]
	if e == nil && create {
		e = newEvent(s, name)
		s.events[name] = e
	}
	return e
}

// AppendMember implements admission.Store. It returns once v is on disk;
// when ctx ends first, the append still completes.
func (s *Store) AppendMember(ctx context.Context, event, lane string, tranche int, v admission.VisitorID) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	l, err := s.event(event, true).openMembers(trancheKey{lane, tranche})
	if err != nil {
		return fmt.Errorf("memstore: %w: %w", admission.ErrStoreDown, err)
	}
	return l.append(ctx, v)
}

// Members implements admission.Store. The slice is the caller's.
func (s *Store) Members(ctx context.Context, event, lane string, tranche int) ([]admission.VisitorID, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	if e := s.event(event, false); e != nil {
		if l := e.members(trancheKey{lane, tranche}); l != nil {
			return l.members(), nil
		}
	}
	return []admission.VisitorID{}, nil
}

// MemberCount implements admission.Store.
func (s *Store) MemberCount(ctx context.Context, event, lane string, tranche int) (int, error) {
	if err := s.enter(event); err != nil {
		return 0, err
	}
	defer s.life.RUnlock()
	if e := s.event(event, false); e != nil {
		if l := e.members(trancheKey{lane, tranche}); l != nil {
			return l.count(), nil
		}
	}
	return 0, nil
}

// Seed implements admission.Store.
func (s *Store) Seed(ctx context.Context, event, lane string, tranche int, proposal []byte) ([]byte, error) {
	if len(proposal) == 0 {
		return nil, errors.New("memstore: empty seed proposal")
	}
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	t := trancheKey{lane, tranche}
	e.mu.Lock()
	seed, ok := e.seeds[t]
	if !ok {
		seed = slices.Clone(proposal)
		e.seeds[t] = seed
		e.changed()
	}
	gen := e.gen
	e.mu.Unlock()
	if err := e.persist(ctx, gen, false); err != nil {
		return nil, err
	}
	return slices.Clone(seed), nil
}

// RecordDraw implements admission.Store.
func (s *Store) RecordDraw(ctx context.Context, event, lane string, d admission.Draw) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	d.Seed, d.At = slices.Clone(d.Seed), d.At.UTC()
	e.mu.Lock()
	draws := e.draws[lane]
	if i, found := slices.BinarySearchFunc(draws, d.Tranche, func(x admission.Draw, t int) int { return x.Tranche - t }); found {
		same := sameDraw(draws[i], d)
		gen := e.gen
		e.mu.Unlock()
		if !same {
			return fmt.Errorf("%w: lane %q tranche %d is already drawn differently", admission.ErrDrawConflict, lane, d.Tranche)
		}
		return e.persist(ctx, gen, false)
	}
	if err := drawFollows(draws, lane, d); err != nil {
		e.mu.Unlock()
		return err
	}
	e.draws[lane] = append(draws, d)
	gen := e.changed()
	e.mu.Unlock()
	return e.persist(ctx, gen, false)
}

// drawFollows checks that d follows the last of draws.
func drawFollows(draws []admission.Draw, lane string, d admission.Draw) error {
	if len(draws) == 0 {
		if d.First != 1 {
			return fmt.Errorf("%w: lane %q: the first draw must start at 1, not %d", admission.ErrDrawConflict, lane, d.First)
		}
		return nil
	}
	last := draws[len(draws)-1]
	if d.Tranche < last.Tranche {
		return fmt.Errorf("%w: lane %q: tranche %d is before the last drawn tranche %d", admission.ErrDrawConflict, lane, d.Tranche, last.Tranche)
	}
	if d.First != last.Next() {
		return fmt.Errorf("%w: lane %q: tranche %d starts at %d, want %d", admission.ErrDrawConflict, lane, d.Tranche, d.First, last.Next())
	}
	return nil
}

func sameDraw(a, b admission.Draw) bool {
	return a.Tranche == b.Tranche && bytes.Equal(a.Seed, b.Seed) && a.First == b.First && a.Count == b.Count && a.At.Equal(b.At)
}

// Draws implements admission.Store.
func (s *Store) Draws(ctx context.Context, event, lane string, after int) ([]admission.Draw, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return []admission.Draw{}, nil
	}
	e.mu.Lock()
	draws := e.draws[lane]
	i, _ := slices.BinarySearchFunc(draws, after+1, func(x admission.Draw, t int) int { return x.Tranche - t })
	out := slices.Clone(draws[i:])
	gen := e.gen
	e.mu.Unlock()
	for i := range out {
		out[i].Seed = slices.Clone(out[i].Seed)
	}
	if out == nil {
		out = []admission.Draw{}
	}
	return out, e.persist(ctx, gen, false)
}

// Advance implements admission.Store.
func (s *Store) Advance(ctx context.Context, event, lane string, to uint64) (uint64, error) {
	if err := s.enter(event); err != nil {
		return 0, err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	e.mu.Lock()
	cur := e.serving[lane]
	if to > cur {
		cur = to
		e.serving[lane] = to
		e.changed()
	}
	gen := e.gen
	e.mu.Unlock()
	return cur, e.persist(ctx, gen, false)
}

// Serving implements admission.Store.
func (s *Store) Serving(ctx context.Context, event string) (map[string]uint64, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	out := map[string]uint64{}
	e := s.event(event, false)
	if e == nil {
		return out, nil
	}
	e.mu.Lock()
	for lane, n := range e.serving {
		out[lane] = n
	}
	gen := e.gen
	e.mu.Unlock()
	return out, e.persist(ctx, gen, false)
}

// Claim implements admission.Store. It is batched: written within
// FlushInterval, and by Close. n must be at most MaxNumber.
func (s *Store) Claim(ctx context.Context, event, lane string, n uint64) error {
	if n > MaxNumber {
		return fmt.Errorf("memstore: cannot claim number %d (at most %d)", n, uint64(MaxNumber))
	}
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.claims[lane]
	i, bit := int(n/8), byte(0x80>>(n%8))
	if i >= len(b) {
		b = append(b, make([]byte, i+1-len(b))...)
		e.claims[lane] = b
	}
	if b[i]&bit == 0 {
		b[i] |= bit
		e.lazy = true
	}
	return nil
}

// Claimed implements admission.Store. It answers for at most 2^30
// numbers per call.
func (s *Store) Claimed(ctx context.Context, event, lane string, from, to uint64) ([]bool, error) {
	if from > to {
		return []bool{}, nil
	}
	if to-from >= maxClaimedSpan {
		return nil, fmt.Errorf("memstore: Claimed of %d..%d spans too many numbers", from, to)
	}
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	out := make([]bool, to-from+1)
	e := s.event(event, false)
	if e == nil {
		return out, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.claims[lane]
	for n := from; n <= to && n/8 < uint64(len(b)); n++ {
		out[n-from] = b[n/8]&(0x80>>(n%8)) != 0
	}
	return out, nil
}

// Revoke implements admission.Store. Times are kept to the millisecond;
// revoking a pass again keeps the later time.
func (s *Store) Revoke(ctx context.Context, event, passID string, until time.Time) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	ms := until.UnixMilli()
	if ms <= s.now() {
		return nil // no longer in force: nothing to remember
	}
	e := s.event(event, true)
	e.mu.Lock()
	if ms > e.revoked[passID] {
		e.revoked[passID] = ms
		e.changed()
	}
	gen := e.gen
	e.mu.Unlock()
	return e.persist(ctx, gen, false)
}

// Revocations implements admission.Store.
func (s *Store) Revocations(ctx context.Context, event string) (map[string]time.Time, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	out := map[string]time.Time{}
	e := s.event(event, false)
	if e == nil {
		return out, nil
	}
	now := s.now()
	e.mu.Lock()
	for id, until := range e.revoked {
		if until > now {
			out[id] = time.UnixMilli(until)
		}
	}
	gen := e.gen
	e.mu.Unlock()
	return out, e.persist(ctx, gen, false)
}

// BarVisitors implements admission.Store. Times are kept to the
// millisecond.
func (s *Store) BarVisitors(ctx context.Context, event string, bars []admission.VisitorBar) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	for _, b := range bars {
		if b.Reason != admission.BarRevoked && b.Reason != admission.BarCompleted {
			return fmt.Errorf("memstore: unknown bar reason %q", b.Reason)
		}
	}
	now := s.now()
	e := s.event(event, true)
	e.mu.Lock()
	for _, nb := range bars {
		r := barRecord{Visitor: nb.Visitor, From: nb.From.UnixMilli(), Until: nb.Until.UnixMilli(), Reason: nb.Reason}
		if r.Until <= now {
			continue // no longer in force: nothing to remember
		}
		if old, ok := e.bars[r.Visitor]; ok && old.Until > now {
			r.From, r.Until = min(r.From, old.From), max(r.Until, old.Until)
			if old.Reason == admission.BarRevoked {
				r.Reason = admission.BarRevoked
			}
			if r == old {
				continue
			}
		}
		e.bars[r.Visitor] = r
		e.changed()
	}
	gen := e.gen
	e.mu.Unlock()
	return e.persist(ctx, gen, false)
}

// VisitorBars implements admission.Store.
func (s *Store) VisitorBars(ctx context.Context, event string) ([]admission.VisitorBar, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	out := []admission.VisitorBar{}
	e := s.event(event, false)
	if e == nil {
		return out, nil
	}
	now := s.now()
	e.mu.Lock()
	for _, b := range e.bars {
		if b.Until > now {
			out = append(out, admission.VisitorBar{Visitor: b.Visitor, From: time.UnixMilli(b.From),
				Until: time.UnixMilli(b.Until), Reason: b.Reason})
		}
	}
	gen := e.gen
	e.mu.Unlock()
	return out, e.persist(ctx, gen, false)
}

// UseInvite implements admission.Store. A zero forget remembers the use
// for good; a forget already past is forgotten at once (as Redis does
// with SET … PXAT in the past).
func (s *Store) UseInvite(ctx context.Context, event, code string, forget time.Time) (bool, error) {
	if err := s.enter(event); err != nil {
		return false, err
	}
	defer s.life.RUnlock()
	now := s.now()
	var fm int64 // 0: never
	if !forget.IsZero() {
		fm = max(forget.UnixMilli(), 1)
	}
	e := s.event(event, true)
	e.mu.Lock()
	if f, ok := e.invites[code]; ok && (f == 0 || f > now) {
		gen := e.gen
		e.mu.Unlock()
		return false, e.persist(ctx, gen, false)
	}
	if fm != 0 && fm <= now {
		delete(e.invites, code)
		e.mu.Unlock()
		return true, nil
	}
	e.invites[code] = fm
	gen := e.changed()
	e.mu.Unlock()
	if err := e.persist(ctx, gen, false); err != nil {
		return false, err
	}
	return true, nil
}

// SetControl implements admission.Store.
func (s *Store) SetControl(ctx context.Context, event string, c admission.Control) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	e.mu.Lock()
	e.control = copyControl(c)
	gen := e.changed()
	e.mu.Unlock()
	return e.persist(ctx, gen, false)
}

// Control implements admission.Store.
func (s *Store) Control(ctx context.Context, event string) (admission.Control, error) {
	if err := s.enter(event); err != nil {
		return admission.Control{}, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return admission.Control{}, nil
	}
	e.mu.Lock()
	c, gen := copyControl(e.control), e.gen
	e.mu.Unlock()
	return c, e.persist(ctx, gen, false)
}

// SaveController implements admission.Store. It is batched: written
// within FlushInterval, and by Close. Saving nil or an empty state
// removes the saved one.
func (s *Store) SaveController(ctx context.Context, event string, state []byte) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(state) == 0 {
		e.controller = nil
	} else {
		e.controller = slices.Clone(state)
	}
	e.lazy = true
	return nil
}

// LoadController implements admission.Store.
func (s *Store) LoadController(ctx context.Context, event string) ([]byte, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return nil, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.controller), nil
}

// Lease implements admission.Store: the only process always leads.
func (s *Store) Lease(ctx context.Context, event, holder string, ttl time.Duration) (bool, error) {
	if err := s.enter(event); err != nil {
		return false, err
	}
	s.life.RUnlock()
	return true, nil
}

var _ admission.Store = (*Store)(nil)
