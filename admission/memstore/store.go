package memstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// FlushInterval is how often batched changes (claims, pass uses,
// controller state) are written.
const FlushInterval = time.Second

// MaxNumber is the largest queue number Claim and MarkUsed accept (the largest bit
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

	// records are the event records (see records.go).
	records records

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
	if err := s.loadRecords(); err != nil {
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
		e.closeMinutes()
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

var _ admission.Store = (*Store)(nil)
