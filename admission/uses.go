package admission

// Pass uses: a reached visitor "came" when a request carrying their pass
// was let through the gate, not when their status poll minted the pass.
// The proxy tells the engine of the first use of each pass it sees
// (NoteUse, on the request path: a lock held for an append, no I/O); the
// engine keeps the numbers in a small per-event buffer, and every
// replica's tick writes its buffer to the store in one batched call
// (Store.MarkUsed). The leader reads the marks of every replica back
// (Store.Used) for the no-show rate and the pending count (regulate.go).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

const (
	// MaxUseBatch is the most numbers one Store.MarkUsed call takes.
	MaxUseBatch = 1 << 16
	// MaxUsedSpan is the most numbers one Store.Used call answers for
	// (16 MiB of answer); the engine reads longer ranges in pieces.
	MaxUsedSpan = 1 << 24
	// useBufferLen bounds the first uses one replica holds for an event
	// between two ticks: beyond it uses are refused (NoteUse reports
	// false) and counted, never waited for. Passes are verified before
	// they get here, so only real admissions fill it: 65,536 a tick is
	// far more than any origin takes.
	useBufferLen = MaxUseBatch
)

// ErrBadNumbers is the error of a store given queue numbers it cannot
// take: 0, beyond its largest number, a range whose from is after its
// to, or more numbers than MaxUseBatch or MaxUsedSpan allow. Nothing is
// changed.
var ErrBadNumbers = errors.New("admission: bad queue numbers")

// CheckUsedRange checks the arguments of Store.Used (for the stores):
// 1 ≤ from ≤ to, at most MaxUsedSpan numbers.
func CheckUsedRange(from, to uint64) error {
	if from == 0 || from > to || to-from >= MaxUsedSpan {
		return fmt.Errorf("%w: range %d..%d (1 ≤ from ≤ to, at most %d numbers)", ErrBadNumbers, from, to, MaxUsedSpan)
	}
	return nil
}

// CheckUseBatch checks the numbers of Store.MarkUsed (for the stores):
// at most MaxUseBatch of them, each in 1..maxNumber.
func CheckUseBatch(numbers []uint64, maxNumber uint64) error {
	if len(numbers) > MaxUseBatch {
		return fmt.Errorf("%w: %d numbers in one batch (at most %d)", ErrBadNumbers, len(numbers), MaxUseBatch)
	}
	for _, n := range numbers {
		if n == 0 || n > maxNumber {
			return fmt.Errorf("%w: number %d (1 to %d)", ErrBadNumbers, n, maxNumber)
		}
	}
	return nil
}

// useBuffer holds the first uses seen on this replica since the last
// tick. Safe for concurrent use: add takes mu for an append; flush runs
// under the event's tickMu.
type useBuffer struct {
	mu  sync.Mutex
	buf []use
	// spare is the slice the next flush hands to add (the two alternate,
	// so that a steady flow of uses allocates nothing); nums is flush's
	// scratch. Both under tickMu.
	spare []use
	nums  []uint64
	// dropped counts uses refused (the buffer full) or lost (a failed
	// write whose retry found it full).
	dropped atomic.Int64
}

type use struct {
	l *lane
	n uint64
}

// add buffers a use, reporting false (and counting it) when the buffer
// is full.
func (u *useBuffer) add(l *lane, n uint64) bool {
	u.mu.Lock()
	ok := len(u.buf) < useBufferLen
	if ok {
		u.buf = append(u.buf, use{l, n})
	}
	u.mu.Unlock()
	if !ok {
		u.dropped.Add(1)
	}
	return ok
}

// NoteUse records that a request carrying pass p was let through the
// gate of event id, so that p's number counts as having come (see
// Figures.NoShowRate). The proxy calls it on the first request with each
// pass it verifies and stops calling once it reports true. It does no
// I/O and allocates nothing in steady state: the number is written to
// the store at this replica's next tick. It reports false when the use
// could not be taken now (the event's buffer is full; counted in
// Figures.UsesDropped): the caller tries again at the pass's next
// request. Passes without a number (let straight through) and numbers
// this replica already noted are taken at once.
func (e *Engine) NoteUse(id string, p *Pass) bool {
	ev := e.lookup(id)
	if ev == nil {
		return true
	}
	if p.Number == 0 {
		ev.redeemed.Add(1)
		return true
	}
	l := ev.byName[p.Lane]
	if l == nil {
		return true // a lane no longer configured: nothing measures it
	}
	n := p.Number
	// Numbers this replica has seen drawn are remembered (a bit each),
	// so a visitor's later passes (renewed, or minted by another poll)
	// cost nothing; a number beyond them (a draw not followed yet) is
	// buffered each time, which the store takes as often as it comes.
	drawn := n <= l.last.Load()
	if drawn && l.usedHere.has(n) {
		return true
	}
	if !ev.uses.add(l, n) {
		return false
	}
	ev.redeemed.Add(1)
	if drawn {
		l.usedHere.set(n)
	}
	return true
}

// flushUses writes the uses buffered since the last tick to the store,
// one MarkUsed per lane. What the store refuses to take now is kept for
// the next tick (as far as the buffer has room). Called under tickMu.
func (ev *event) flushUses(ctx context.Context) error {
	u := &ev.uses
	u.mu.Lock()
	batch := u.buf
	u.buf = u.spare[:0]
	u.mu.Unlock()
	if len(batch) == 0 {
		u.spare = batch
		return nil
	}
	var errs []error
	for _, l := range ev.lanes {
		nums := u.nums[:0]
		for _, x := range batch {
			if x.l == l {
				nums = append(nums, x.n)
			}
		}
		u.nums = nums
		if len(nums) == 0 {
			continue
		}
		if err := ev.e.opts.Store.MarkUsed(ctx, ev.conf().ID, l.cfg.Name, nums); err != nil {
			errs = append(errs, fmt.Errorf("recording %d pass uses: %w", len(nums), err))
			if errors.Is(err, ErrBadNumbers) {
				u.dropped.Add(int64(len(nums))) // never taken: numbers beyond the store's
				continue
			}
			u.mu.Lock()
			for _, n := range nums {
				if len(u.buf) >= useBufferLen {
					u.dropped.Add(1)
					continue
				}
				u.buf = append(u.buf, use{l, n})
			}
			u.mu.Unlock()
		}
	}
	clear(batch) // drop the lane pointers
	u.spare = batch[:0]
	return errors.Join(errs...)
}

// usedRange reads which numbers from..to of a lane had their pass used,
// in pieces of at most MaxUsedSpan.
func (ev *event) usedRange(ctx context.Context, l *lane, from, to uint64) ([]bool, error) {
	out := make([]bool, 0, to-from+1)
	for lo := from; ; {
		hi := to
		if hi-lo >= MaxUsedSpan {
			hi = lo + MaxUsedSpan - 1
		}
		b, err := ev.e.opts.Store.Used(ctx, ev.conf().ID, l.cfg.Name, lo, hi)
		if err != nil {
			return nil, err
		}
		if uint64(len(b)) != hi-lo+1 {
			return nil, fmt.Errorf("admission: the store answered %d entries for pass uses %d..%d", len(b), lo, hi)
		}
		out = append(out, b...)
		if hi == to {
			return out, nil
		}
		lo = hi + 1
	}
}
