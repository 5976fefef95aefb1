package netlimit

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Class is a kind of request sharing a Budget.
type Class uint8

// Classes of requests.
const (
	// Anonymous: requests without a pass (pass routes, unmatched paths).
	Anonymous Class = iota
	// Admitted: requests with a valid pass on a gated route, and bypasses.
	Admitted
	// API: the waiting room itself (its API, pages and assets).
	API
	// NumClasses is the number of classes.
	NumClasses
)

var classNames = [NumClasses]string{"anonymous", "admitted", "api"}

// String returns the class's metric label.
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "unknown"
}

// Budget counts requests in flight against a maximum, per class, each
// class keeping its reserved share (see the package documentation). A nil
// *Budget has no limit. It is safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	max     int
	reserve [NumClasses]int
	used    [NumClasses]int
	total   int
}

// NewBudget returns a budget of max requests in flight; shares[c] is the
// fraction of max reserved for class c (rounded up). The shares must be 0
// to 1 and sum to less than 1, so that some capacity is left to share.
// max 0 returns nil: no limit.
func NewBudget(max int, shares [NumClasses]float64) (*Budget, error) {
	if max < 0 {
		return nil, fmt.Errorf("netlimit: budget of %d", max)
	}
	sum := 0.0
	for c, s := range shares {
		if !(s >= 0 && s < 1) {
			return nil, fmt.Errorf("netlimit: the %s share %v is not in [0, 1)", Class(c), s)
		}
		sum += s
	}
	if sum >= 1 {
		return nil, errors.New("netlimit: the reserved shares sum to 1 or more")
	}
	if max == 0 {
		return nil, nil
	}
	b := &Budget{max: max}
	for c, s := range shares {
		b.reserve[c] = min(int(math.Ceil(s*float64(max))), max)
	}
	return b, nil
}

// Acquire takes a slot for class c, or reports false when c may not take
// one now (the request should be refused, 503). Every true is paired with
// one Release(c).
func (b *Budget) Acquire(c Class) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used[c] >= b.reserve[c] {
		// Beyond its reserve, c borrows only what the others' unused
		// reserves do not need.
		held := 0
		for o := range NumClasses {
			if o != c {
				held += max(b.reserve[o]-b.used[o], 0)
			}
		}
		if b.total+held >= b.max {
			return false
		}
	}
	b.used[c]++
	b.total++
	return true
}

// Release returns a slot Acquire(c) took.
func (b *Budget) Release(c Class) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.used[c]--
	b.total--
	b.mu.Unlock()
}

// InUse returns the slots class c holds.
func (b *Budget) InUse(c Class) int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used[c]
}

// Max returns the budget's maximum (0 for a nil budget: no limit).
func (b *Budget) Max() int {
	if b == nil {
		return 0
	}
	return b.max
}

// Reserved returns the slots reserved for class c.
func (b *Budget) Reserved(c Class) int {
	if b == nil {
		return 0
	}
	return b.reserve[c]
}
