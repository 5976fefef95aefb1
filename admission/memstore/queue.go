// The queue's state: members, seeds, draws, serving counters, claimed
// numbers and used passes.

package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/waitroom/waitroom/admission"
)

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
	e.lazy = setBit(e.claims, lane, n) || e.lazy
	return nil
}

// setBit sets bit n of a lane's bitmap in bitmaps (most significant
// first, as Redis SETBIT), growing it as needed, and reports whether it
// was clear.
func setBit(bitmaps map[string][]byte, lane string, n uint64) bool {
	b := bitmaps[lane]
	i, bit := int(n/8), byte(0x80>>(n%8))
	if i >= len(b) {
		b = append(b, make([]byte, i+1-len(b))...)
		bitmaps[lane] = b
	}
	if b[i]&bit != 0 {
		return false
	}
	b[i] |= bit
	return true
}

// readBits reports bits from..to of bitmap b (index i is bit from+i).
func readBits(b []byte, from, to uint64) []bool {
	out := make([]bool, to-from+1)
	for n := from; n <= to && n/8 < uint64(len(b)); n++ {
		out[n-from] = b[n/8]&(0x80>>(n%8)) != 0
	}
	return out
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
	return s.readBitmap(event, lane, from, to, claimBits)
}

// MarkUsed implements admission.Store. It is batched, as Claim: written
// within FlushInterval, and by Close. Numbers must be 1 to MaxNumber.
func (s *Store) MarkUsed(ctx context.Context, event, lane string, numbers []uint64) error {
	if err := admission.CheckUseBatch(numbers, MaxNumber); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	if len(numbers) == 0 {
		return nil
	}
	e := s.event(event, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range numbers {
		e.lazy = setBit(e.used, lane, n) || e.lazy
	}
	return nil
}

// Used implements admission.Store.
func (s *Store) Used(ctx context.Context, event, lane string, from, to uint64) ([]bool, error) {
	if err := admission.CheckUsedRange(from, to); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	return s.readBitmap(event, lane, from, to, useBits)
}

func claimBits(e *event) map[string][]byte { return e.claims }
func useBits(e *event) map[string][]byte   { return e.used }

// readBitmap reads bits from..to of a lane's bitmap among those pick
// returns (claims or uses); an event the store has no state of has none
// set.
func (s *Store) readBitmap(id, lane string, from, to uint64, pick func(*event) map[string][]byte) ([]bool, error) {
	if err := s.enter(id); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	e := s.event(id, false)
	if e == nil {
		return make([]bool, to-from+1), nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return readBits(pick(e)[lane], from, to), nil
}
