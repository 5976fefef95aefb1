// Revocations, visitor bars, invite codes, the operator's control, the
// controller's saved state and the lease.

package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/waitroom/waitroom/admission"
)

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

// PlaceAccount implements admission.Store. forget is kept to the
// millisecond; a zero forget is a time past.
func (s *Store) PlaceAccount(ctx context.Context, event, account string, p admission.AccountPlace, forget time.Time) (admission.AccountPlace, bool, error) {
	if err := s.enter(event); err != nil {
		return admission.AccountPlace{}, false, err
	}
	defer s.life.RUnlock()
	now := s.now()
	fm := forget.UnixMilli()
	e := s.event(event, true)
	e.mu.Lock()
	if r, ok := e.accounts[account]; ok && r.Forget > now {
		gen := e.gen
		e.mu.Unlock()
		return r.Place, false, e.persist(ctx, gen, false)
	}
	if forget.IsZero() || fm <= now {
		delete(e.accounts, account)
		e.mu.Unlock()
		return p, true, nil
	}
	e.accounts[account] = accountRecord{Place: p, Forget: fm}
	gen := e.changed()
	e.mu.Unlock()
	if err := e.persist(ctx, gen, false); err != nil {
		return admission.AccountPlace{}, false, err
	}
	return p, true, nil
}

// AccountPlace implements admission.Store.
func (s *Store) AccountPlace(ctx context.Context, event, account string) (admission.AccountPlace, bool, error) {
	if err := s.enter(event); err != nil {
		return admission.AccountPlace{}, false, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return admission.AccountPlace{}, false, nil
	}
	now := s.now()
	e.mu.Lock()
	r, ok := e.accounts[account]
	gen := e.gen
	e.mu.Unlock()
	if !ok || r.Forget <= now {
		return admission.AccountPlace{}, false, e.persist(ctx, gen, false)
	}
	return r.Place, true, e.persist(ctx, gen, false)
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

// GrantSlots implements admission.Store. Slots live in memory only: after
// a restart the leader grants afresh at its next tick.
func (s *Store) GrantSlots(ctx context.Context, event string, n int, ttl time.Duration) (int, error) {
	if err := s.enter(event); err != nil {
		return 0, err
	}
	defer s.life.RUnlock()
	e := s.event(event, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	taken := e.slotsTaken
	e.slotsLeft, e.slotsTaken, e.slotsUntil = max(n, 0), 0, s.now()+ttl.Milliseconds()
	return taken, nil
}

// TakeSlot implements admission.Store.
func (s *Store) TakeSlot(ctx context.Context, event string) (bool, error) {
	if err := s.enter(event); err != nil {
		return false, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slotsLeft <= 0 || s.now() >= e.slotsUntil {
		return false, nil
	}
	e.slotsLeft--
	e.slotsTaken++
	return true, nil
}

// sample is one replica's measurement record and when it runs out (ms).
type sample struct {
	b     []byte
	until int64
}

// PublishSample implements admission.Store. Samples live in memory only.
func (s *Store) PublishSample(ctx context.Context, event, replica string, b []byte, ttl time.Duration) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	if replica == "" || ttl < time.Millisecond {
		return fmt.Errorf("memstore: a sample needs a replica and a ttl of at least 1ms (got %q, %v)", replica, ttl)
	}
	e := s.event(event, true)
	now := s.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.samples == nil {
		e.samples = map[string]sample{}
	}
	for r, x := range e.samples {
		if now >= x.until {
			delete(e.samples, r)
		}
	}
	e.samples[replica] = sample{b: slices.Clone(b), until: now + ttl.Milliseconds()}
	return nil
}

// Samples implements admission.Store.
func (s *Store) Samples(ctx context.Context, event string) (map[string][]byte, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	out := map[string][]byte{}
	e := s.event(event, false)
	if e == nil {
		return out, nil
	}
	now := s.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for r, x := range e.samples {
		if now < x.until {
			out[r] = slices.Clone(x.b)
		}
	}
	return out, nil
}
