package memstore

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/challengetest"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
)

var ctx = context.Background()

func TestConformance(t *testing.T) {
	challengetest.Run(t, func(t *testing.T) challenge.ReplayGuard {
		g := New(Options{})
		t.Cleanup(func() { g.Close() })
		return g
	})
}

// TestConformanceTinyExactSet runs the suite with an exact set of 4 ids:
// everything else rests on the filters.
func TestConformanceTinyExactSet(t *testing.T) {
	challengetest.Run(t, func(t *testing.T) challenge.ReplayGuard {
		g := New(Options{MaxExact: 4, ExpectedPerWindow: 100_000})
		t.Cleanup(func() { g.Close() })
		return g
	})
}

func newClock() *fakeclock.Clock { return fakeclock.New(time.Unix(1_900_000_000, 0)) }

func id(n uint64) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b[8:], n)
	b[0] = 0xab
	return b
}

func mustRedeem(t *testing.T, g *Guard, id []byte, exp time.Time, want bool) {
	t.Helper()
	ok, err := g.Redeem(ctx, id, exp)
	if err != nil || ok != want {
		t.Fatalf("Redeem(%x, %v) = %v, %v; want %v", id, exp, ok, err, want)
	}
}

func TestDefaults(t *testing.T) {
	g := New(Options{FalsePositiveRate: 2, Window: -1, MaxExact: -5})
	defer g.Close()
	if g.window != int64(DefaultWindow+WindowSlack) || g.maxExact != DefaultMaxExact {
		t.Fatalf("window %v, max exact %d", time.Duration(g.window), g.maxExact)
	}
	if k := g.blooms[0].K(); k != 20 {
		t.Errorf("filter has %d hash functions, want 20 for a rate of 1e-6", k)
	}
}

// TestEvictionNeverAcceptsReplay: with an exact set of 16, thousands of
// ids are still all refused the second time (the filters hold them), and
// the exact set stays within its bound.
func TestEvictionNeverAcceptsReplay(t *testing.T) {
	c := newClock()
	g := New(Options{Window: time.Minute, MaxExact: 16, ExpectedPerWindow: 20_000, Now: c.Now})
	defer g.Close()
	const n = 5000
	for i := range uint64(n) {
		mustRedeem(t, g, id(i), c.Now().Add(time.Minute), true)
		if len(g.exact) > 16 || len(g.byExp) != len(g.exact) {
			t.Fatalf("exact set %d entries, heap %d", len(g.exact), len(g.byExp))
		}
		if i%100 == 0 {
			c.Add(time.Second) // spread the expiries over the windows
		}
	}
	for i := range uint64(n) {
		mustRedeem(t, g, id(i), c.Now().Add(time.Minute), false)
	}
}

// TestRotation: a filter is cleared once every id in it has expired, and
// an expired id can be redeemed again once its window has passed.
func TestRotation(t *testing.T) {
	c := newClock()
	const w = time.Minute
	g := New(Options{Window: w, MaxExact: 1, Now: c.Now})
	defer g.Close()
	period := w + WindowSlack
	// Start at the beginning of a window.
	c.Add(time.Duration(period.Nanoseconds() - c.Now().UnixNano()%period.Nanoseconds()))
	a, b := id(1), id(2)
	mustRedeem(t, g, a, c.Now().Add(w), true)
	mustRedeem(t, g, b, c.Now().Add(w/2), true) // evicts a from the exact set
	if _, ok := g.exact[keyOf(a)]; ok {
		t.Fatal("a is still in the exact set of one")
	}
	for _, step := range []time.Duration{w / 4, w / 2, w / 4} {
		c.Add(step)
		mustRedeem(t, g, a, c.Now().Add(w), false) // still in its window's filter
		mustRedeem(t, g, b, c.Now().Add(w), false)
	}
	// Two periods on, both windows holding a and b have passed.
	c.Add(2 * period)
	mustRedeem(t, g, a, c.Now().Add(w), true)
	mustRedeem(t, g, b, c.Now().Add(w), true)
	// A long jump clears both filters.
	c.Add(10 * period)
	g.mu.Lock()
	g.advance(c.Now().UnixNano())
	g.mu.Unlock()
	for i := range g.blooms {
		if n := g.blooms[i].ApproximatedSize(); n != 0 {
			t.Errorf("filter %d still holds about %d ids", i, n)
		}
	}
}

// TestPrune: expired ids leave the exact set.
func TestPrune(t *testing.T) {
	c := newClock()
	g := New(Options{Window: time.Minute, Now: c.Now})
	defer g.Close()
	for i := range uint64(100) {
		mustRedeem(t, g, id(i), c.Now().Add(time.Duration(i+1)*time.Second), true)
	}
	c.Add(50 * time.Second)
	mustRedeem(t, g, id(1000), c.Now().Add(time.Minute), true)
	if n := len(g.exact); n != 51 {
		t.Fatalf("exact set holds %d ids after half expired, want 51", n)
	}
	// An expired id is refused while its filter lives, whatever the
	// exact set says: a refusal is always safe.
	mustRedeem(t, g, id(0), c.Now().Add(time.Minute), false)
}

// TestLongLivedIDs: an id expiring beyond the filters is held in the
// exact set, never dropped from it, and enters a filter once in reach.
func TestLongLivedIDs(t *testing.T) {
	c := newClock()
	g := New(Options{Window: time.Minute, MaxExact: 4, Now: c.Now})
	defer g.Close()
	far := c.Now().Add(time.Hour)
	for i := range uint64(4) {
		mustRedeem(t, g, id(i), far, true)
	}
	if len(g.long) != 4 {
		t.Fatalf("%d long-lived ids, want 4", len(g.long))
	}
	ok, err := g.Redeem(ctx, id(10), c.Now().Add(time.Second))
	if !errors.Is(err, ErrFull) || ok {
		t.Fatalf("Redeem with the exact set full of long-lived ids = %v, %v; want ErrFull", ok, err)
	}
	for i := range uint64(4) {
		mustRedeem(t, g, id(i), far, false)
	}
	// Close to their expiry they come within reach, go into a filter and
	// may be dropped from the exact set.
	c.Add(time.Hour - 30*time.Second)
	mustRedeem(t, g, id(10), c.Now().Add(time.Second), true)
	if len(g.long) != 0 {
		t.Fatalf("%d ids still long-lived 30s before expiry", len(g.long))
	}
	for i := range uint64(20) {
		mustRedeem(t, g, id(100+i), c.Now().Add(time.Second), true)
	}
	for i := range uint64(4) {
		mustRedeem(t, g, id(i), far, false)
	}
}

// TestChallengeExpiryRounding: challenge expiries are rounded up to a
// whole second, so an id may live a little longer than Window; the slack
// keeps it in a filter at any point of a window.
func TestChallengeExpiryRounding(t *testing.T) {
	c := newClock()
	const ttl = 90 * time.Second
	g := New(Options{Window: ttl, MaxExact: 1, Now: c.Now})
	defer g.Close()
	for i := range uint64(2000) {
		c.Add(97 * time.Millisecond)
		issued := c.Now()
		exp := issued.Add(ttl).Truncate(time.Second).Add(time.Second)
		mustRedeem(t, g, id(i), exp, true)
		if len(g.long) != 0 {
			t.Fatalf("id %d expiring %v after redemption is beyond the filters", i, exp.Sub(c.Now()))
		}
	}
}

// TestFalsePositiveRate: within ExpectedPerWindow, fresh ids are refused
// at about the configured rate.
func TestFalsePositiveRate(t *testing.T) {
	c := newClock()
	const n, rate = 10_000, 0.01
	g := New(Options{Window: time.Minute, ExpectedPerWindow: n, FalsePositiveRate: rate, MaxExact: 1, Now: c.Now})
	defer g.Close()
	exp := c.Now().Add(time.Second)
	for i := range uint64(n) {
		if _, err := g.Redeem(ctx, id(i), exp); err != nil {
			t.Fatal(err)
		}
	}
	// An expired id is checked but not added: the filters stay as full.
	refused := 0
	past := c.Now().Add(-time.Second)
	for i := range uint64(n) {
		ok, err := g.Redeem(ctx, id(1_000_000+i), past)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			refused++
		}
	}
	if got := float64(refused) / n; got > 2*rate {
		t.Fatalf("%.2f%% of fresh ids refused, configured %.2f%%", 100*got, 100*rate)
	} else {
		t.Logf("%.2f%% of fresh ids refused at a configured %.2f%%", 100*got, 100*rate)
	}
}

func TestRedeemAllocs(t *testing.T) {
	c := newClock()
	g := New(Options{Window: time.Minute, MaxExact: 64, ExpectedPerWindow: 1_000_000, Now: c.Now})
	defer g.Close()
	exp := c.Now().Add(time.Minute)
	b := make([]byte, 16)
	var n uint64
	redeem := func() {
		n++
		binary.BigEndian.PutUint64(b, n)
		if ok, err := g.Redeem(ctx, b, exp); !ok || err != nil {
			t.Fatalf("Redeem = %v, %v", ok, err)
		}
	}
	for range 1000 { // fill the exact set and its heap
		redeem()
	}
	if a := testing.AllocsPerRun(1000, redeem); a != 0 {
		t.Fatalf("Redeem of a fresh id allocates %.1f times", a)
	}
	replay := func() {
		if ok, _ := g.Redeem(ctx, b, exp); ok {
			t.Fatal("replay accepted")
		}
	}
	if a := testing.AllocsPerRun(1000, replay); a != 0 {
		t.Fatalf("Redeem of a replay allocates %.1f times", a)
	}
}

func TestKeys(t *testing.T) {
	long1 := make([]byte, 40)
	long2 := make([]byte, 40)
	long2[39] = 1
	keys := map[key]string{}
	for name, b := range map[string][]byte{
		"empty": {}, "zero": {0}, "two zeros": {0, 0}, "32 zeros": make([]byte, 32),
		"33 zeros": make([]byte, 33), "40 zeros": long1, "40 bytes ending in 1": long2,
	} {
		k := keyOf(b)
		if other, ok := keys[k]; ok {
			t.Fatalf("%s and %s share a key", name, other)
		}
		keys[k] = name
	}
}
