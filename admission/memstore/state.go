package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// trancheKey names one lane's tranche.
type trancheKey struct {
	lane string
	n    int
}

// event is one event's queue state. Members live in memberLogs; the rest
// is here and in the event's state file.
//
// Durable changes bump gen and wait until a state file of at least that
// gen is on disk (persist). Readers wait for the gen they observed, so no
// answer rests on a change a crash could still take away. Batched changes
// (claims, pass uses, controller state) only set lazy.
type event struct {
	s    *Store
	name string
	dir  string

	dirMu    sync.Mutex
	dirReady bool

	mmu      sync.Mutex
	tranches map[trancheKey]*memberLog

	mu         sync.Mutex
	seeds      map[trancheKey][]byte
	draws      map[string][]admission.Draw
	serving    map[string]uint64
	claims     map[string][]byte                 // per lane, bit n (most significant first, as Redis SETBIT) is number n
	used       map[string][]byte                 // per lane, as claims: number n's pass was used at the gate
	revoked    map[string]int64                  // pass id → until (Unix ms)
	bars       map[admission.VisitorID]barRecord // visitor bars in force
	invites    map[string]int64                  // code → forget (Unix ms; 0: never)
	accounts   map[string]accountRecord          // account key → its place
	control    admission.Control
	controller []byte
	// Pass-through slots (not persisted): left of the last grant, taken
	// since it, and when it ends (Unix ms).
	slotsLeft, slotsTaken int
	// samples are the replicas' measurement records (in memory only).
	samples map[string]sample
	// minutes are the leader's minute records (see minutes.go), loaded
	// from their file at first use.
	minutes    minuteBook
	slotsUntil int64
	gen        uint64
	lazy       bool

	wmu     sync.Mutex
	written uint64 // gen of the newest state file on disk
	next    *round // waiters for the next write
	writing bool
	wg      sync.WaitGroup
}

func newEvent(s *Store, name string) *event {
	return &event{s: s, name: name, dir: filepath.Join(s.opts.Dir, "events", escape(name)),
		tranches: map[trancheKey]*memberLog{}, seeds: map[trancheKey][]byte{},
		draws: map[string][]admission.Draw{}, serving: map[string]uint64{}, claims: map[string][]byte{},
		used: map[string][]byte{}, revoked: map[string]int64{}, bars: map[admission.VisitorID]barRecord{}, invites: map[string]int64{},
		accounts: map[string]accountRecord{}}
}

// ensureDir creates the event's directory and makes its entry durable.
func (e *event) ensureDir() error {
	e.dirMu.Lock()
	defer e.dirMu.Unlock()
	if e.dirReady {
		return nil
	}
	if err := os.Mkdir(e.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := fsutil.SyncDir(filepath.Dir(e.dir)); err != nil {
		return err
	}
	e.dirReady = true
	return nil
}

// members returns a tranche's log, nil when it has none.
func (e *event) members(t trancheKey) *memberLog {
	e.mmu.Lock()
	defer e.mmu.Unlock()
	return e.tranches[t]
}

// openMembers returns a tranche's log, opening it (and loading its file,
// when there is one) the first time.
func (e *event) openMembers(t trancheKey) (*memberLog, error) {
	e.mmu.Lock()
	defer e.mmu.Unlock()
	if l := e.tranches[t]; l != nil {
		return l, nil
	}
	l, err := openMemberLog(filepath.Join(e.dir, escape(t.lane)+"."+strconv.Itoa(t.n)+".members"), e.ensureDir, e.s.syncers)
	if err != nil {
		return nil, err
	}
	e.tranches[t] = l
	return l, nil
}

// changed records a durable change; call with e.mu held. The caller then
// waits with persist for the returned gen.
func (e *event) changed() uint64 {
	e.gen++
	return e.gen
}

// round is one group commit of an event's state file: everyone who joined
// it waits for one write.
type round struct {
	done chan struct{}
	err  error
}

func newRound() *round { return &round{done: make(chan struct{})} }

func (r *round) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		// The write goes ahead; the caller only stops waiting for it.
		return ctx.Err()
	}
}

// persist waits until the state file on disk includes gen; with force it
// writes the state now whatever gen is on disk. Concurrent callers share
// one write (group commit).
func (e *event) persist(ctx context.Context, gen uint64, force bool) error {
	e.wmu.Lock()
	if !force && gen <= e.written {
		e.wmu.Unlock()
		return nil
	}
	if e.next == nil {
		e.next = newRound()
	}
	r := e.next
	if !e.writing {
		e.writing = true
		e.wg.Add(1)
		go e.writeLoop()
	}
	e.wmu.Unlock()
	return r.wait(ctx)
}

// writeLoop writes the state for each round of waiters. A round's state
// is captured after every one of its waiters made its change, so the file
// holds all of them.
func (e *event) writeLoop() {
	defer e.wg.Done()
	for {
		e.wmu.Lock()
		r := e.next
		if r == nil {
			e.writing = false
			e.wmu.Unlock()
			return
		}
		e.next = nil
		e.wmu.Unlock()

		e.mu.Lock()
		st, gen := e.capture()
		e.lazy = false
		e.mu.Unlock()
		data, err := json.Marshal(st)
		if err == nil {
			err = e.ensureDir()
		}
		if err == nil {
			err = writeAtomic(e.dir, "state", data)
		}
		if err != nil {
			e.mu.Lock()
			e.lazy = true // try again at the next flush
			e.mu.Unlock()
			err = fmt.Errorf("memstore: %w: writing the state of event %q: %w", admission.ErrStoreDown, e.name, err)
			e.s.opts.Logger.Error("memstore: writing an event's state failed", "event", e.name, "err", err)
		} else {
			e.wmu.Lock()
			e.written = max(e.written, gen)
			e.wmu.Unlock()
		}
		r.err = err
		close(r.done)
	}
}

// stateFormat is the version of the state file.
const stateFormat = 1

// stateFile is an event's state as written to disk.
type stateFile struct {
	Format     int                         `json:"format"`
	Event      string                      `json:"event"`
	Seeds      []seedRecord                `json:"seeds,omitempty"`
	Draws      map[string][]admission.Draw `json:"draws,omitempty"`
	Serving    map[string]uint64           `json:"serving,omitempty"`
	Claims     map[string][]byte           `json:"claims,omitempty"`
	Used       map[string][]byte           `json:"used,omitempty"`
	Revoked    map[string]int64            `json:"revoked,omitempty"`
	Bars       []barRecord                 `json:"bars,omitempty"`
	Invites    map[string]int64            `json:"invites,omitempty"`
	Accounts   map[string]accountRecord    `json:"accounts,omitempty"`
	Control    admission.Control           `json:"control"`
	Controller []byte                      `json:"controller,omitempty"`
}

// barRecord is a visitor bar as kept and written (times in Unix ms).
type barRecord struct {
	Visitor admission.VisitorID `json:"visitor"`
	From    int64               `json:"from"`
	Until   int64               `json:"until"`
	Reason  admission.BarReason `json:"reason"`
}

// accountRecord is an account's place as kept and written, with when it
// may be forgotten (Unix ms).
type accountRecord struct {
	Place  admission.AccountPlace `json:"place"`
	Forget int64                  `json:"forget"`
}

type seedRecord struct {
	Lane    string `json:"lane"`
	Tranche int    `json:"tranche"`
	Seed    []byte `json:"seed"`
}

// capture copies the state for writing, and drops revocations and invite
// uses that no longer need remembering. Called with e.mu held; encoding
// happens after. Seeds, draw records and controller state are never
// changed in place (only replaced or appended to), so sharing them is
// safe; claim and use bitmaps are changed in place and are copied.
func (e *event) capture() (*stateFile, uint64) {
	now := e.s.now()
	for id, until := range e.revoked {
		if until <= now {
			delete(e.revoked, id)
		}
	}
	for v, b := range e.bars {
		if b.Until <= now {
			delete(e.bars, v)
		}
	}
	for code, forget := range e.invites {
		if forget != 0 && forget <= now {
			delete(e.invites, code)
		}
	}
	for a, r := range e.accounts {
		if r.Forget <= now {
			delete(e.accounts, a)
		}
	}
	st := &stateFile{Format: stateFormat, Event: e.name, Draws: map[string][]admission.Draw{},
		Serving: maps.Clone(e.serving), Claims: map[string][]byte{}, Used: map[string][]byte{}, Revoked: maps.Clone(e.revoked),
		Invites: maps.Clone(e.invites), Accounts: maps.Clone(e.accounts), Control: copyControl(e.control), Controller: e.controller}
	for _, b := range e.bars {
		st.Bars = append(st.Bars, b)
	}
	slices.SortFunc(st.Bars, func(a, b barRecord) int { return bytes.Compare(a.Visitor[:], b.Visitor[:]) })
	for t, seed := range e.seeds {
		st.Seeds = append(st.Seeds, seedRecord{Lane: t.lane, Tranche: t.n, Seed: seed})
	}
	slices.SortFunc(st.Seeds, func(a, b seedRecord) int {
		if c := strings.Compare(a.Lane, b.Lane); c != 0 {
			return c
		}
		return a.Tranche - b.Tranche
	})
	for lane, d := range e.draws {
		st.Draws[lane] = slices.Clip(d)
	}
	for lane, b := range e.claims {
		st.Claims[lane] = slices.Clone(b)
	}
	for lane, b := range e.used {
		st.Used[lane] = slices.Clone(b)
	}
	return st, e.gen
}

// loadState reads an event's state file into e; a missing file leaves e
// empty.
func (e *event) loadState() error {
	os.Remove(filepath.Join(e.dir, "state"+fsutil.TempSuffix)) // an interrupted write
	data, err := os.ReadFile(filepath.Join(e.dir, "state"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("memstore: event %q: bad state file: %w", e.name, err)
	}
	if st.Format != stateFormat || st.Event != e.name {
		return fmt.Errorf("memstore: event %q: state file is format %d of event %q", e.name, st.Format, st.Event)
	}
	for _, r := range st.Seeds {
		e.seeds[trancheKey{r.Lane, r.Tranche}] = r.Seed
	}
	for lane, d := range st.Draws {
		e.draws[lane] = d
	}
	maps.Copy(e.serving, st.Serving)
	maps.Copy(e.claims, st.Claims)
	maps.Copy(e.used, st.Used)
	maps.Copy(e.revoked, st.Revoked)
	for _, b := range st.Bars {
		e.bars[b.Visitor] = b
	}
	maps.Copy(e.invites, st.Invites)
	maps.Copy(e.accounts, st.Accounts)
	e.control = st.Control
	if len(st.Controller) > 0 {
		e.controller = st.Controller
	}
	return nil
}

// copyControl returns c with its own Caps.
func copyControl(c admission.Control) admission.Control {
	if c.Caps != nil {
		caps := *c.Caps
		c.Caps = &caps
	}
	c.Notice = c.Notice.Clone()
	return c
}
