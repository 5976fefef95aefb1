package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// fakeClock is a clock tests move by hand; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return t0.Add(time.Duration(c.ns.Load())) }
func (c *fakeClock) Set(d time.Duration)     { c.ns.Store(int64(d)) }
func (c *fakeClock) Add(d time.Duration)     { c.ns.Add(int64(d)) }
func (c *fakeClock) At(d time.Duration) bool { c.Set(d); return true }

func newTestLimiter(t testing.TB, cfg Config) (*Limiter, *fakeClock) {
	t.Helper()
	c := &fakeClock{}
	cfg.Clock = c.Now
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string // problems named in the error; none: valid
	}{
		{"zero", Config{}, nil},
		{"typical", Config{PerIP: Bucket{Rate: 2, Burst: 10}, PerPrefix: Bucket{Rate: 50, Burst: 200}, IPv4Prefix: 16, IPv6Prefix: 64, TableSize: 1000}, nil},
		{"limits", Config{PerIP: Bucket{Rate: MinRate, Burst: MaxBurst}, IPv4Prefix: 32, IPv6Prefix: 128}, nil},
		{"off with a burst", Config{PerIP: Bucket{Burst: 5}}, nil},
		{"negative rate", Config{PerIP: Bucket{Rate: -1, Burst: 1}}, []string{"PerIP.Rate"}},
		{"NaN rate", Config{PerPrefix: Bucket{Rate: math.NaN(), Burst: 1}}, []string{"PerPrefix.Rate"}},
		{"infinite rate", Config{PerPrefix: Bucket{Rate: math.Inf(1), Burst: 1}}, []string{"PerPrefix.Rate"}},
		{"tiny rate", Config{PerIP: Bucket{Rate: MinRate / 2, Burst: 1}}, []string{"PerIP.Rate"}},
		{"no burst", Config{PerIP: Bucket{Rate: 1}}, []string{"PerIP.Burst"}},
		{"huge burst", Config{PerPrefix: Bucket{Rate: 1, Burst: MaxBurst + 1}}, []string{"PerPrefix.Burst"}},
		{"negative burst", Config{PerPrefix: Bucket{Burst: -1}}, []string{"PerPrefix.Burst"}},
		{"prefixes", Config{IPv4Prefix: 33, IPv6Prefix: -1}, []string{"IPv4Prefix", "IPv6Prefix"}},
		{"table and window", Config{TableSize: -1, RateWindow: -time.Second}, []string{"TableSize", "RateWindow"}},
		{"everything at once", Config{PerIP: Bucket{Rate: 1}, PerPrefix: Bucket{Rate: -1}, IPv6Prefix: 129, TableSize: -5},
			[]string{"PerIP.Burst", "PerPrefix.Rate", "IPv6Prefix", "TableSize"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.cfg)
			if len(tc.want) == 0 {
				if err != nil || l == nil {
					t.Fatalf("New = %v, %v; want a limiter", l, err)
				}
				return
			}
			if !errors.Is(err, ErrBadConfig) || l != nil {
				t.Fatalf("New = %v, %v; want ErrBadConfig", l, err)
			}
			if !strings.HasPrefix(err.Error(), "ratelimit: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w+":") {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			if n := strings.Count(err.Error(), ";") + 1; n != len(tc.want) {
				t.Errorf("error %q names %d problems, want %d", err, n, len(tc.want))
			}
		})
	}
}

// step is one Allow call at a time, with its expected answer.
type step struct {
	at    time.Duration
	addr  string
	ok    bool
	retry time.Duration
}

func runSteps(t *testing.T, l *Limiter, c *fakeClock, steps []step) {
	t.Helper()
	for i, s := range steps {
		c.Set(s.at)
		ok, retry := l.Allow(addr(s.addr))
		if ok != s.ok || retry != s.retry {
			t.Fatalf("step %d (%s at %v): Allow = %v, %v; want %v, %v", i, s.addr, s.at, ok, retry, s.ok, s.retry)
		}
	}
}

func TestBuckets(t *testing.T) {
	const a, b = "192.0.2.1", "192.0.2.2"
	ms := time.Millisecond
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{
			name: "burst then refusal, exact retry",
			cfg:  Config{PerIP: Bucket{Rate: 2, Burst: 3}},
			steps: []step{
				{0, a, true, 0}, {0, a, true, 0}, {0, a, true, 0},
				{0, a, false, 500 * ms},
				{100 * ms, a, false, 400 * ms},
				{499 * ms, a, false, 1 * ms},
				{500 * ms, a, true, 0},
				{500 * ms, a, false, 500 * ms},
				{0, b, true, 0}, // another address has its own bucket
			},
		},
		{
			name: "refill at the rate, up to the burst",
			cfg:  Config{PerIP: Bucket{Rate: 10, Burst: 2}},
			steps: []step{
				{0, a, true, 0}, {0, a, true, 0}, {0, a, false, 100 * ms},
				{100 * ms, a, true, 0}, {150 * ms, a, false, 50 * ms},
				{200 * ms, a, true, 0},
				// A long quiet spell refills the burst, not more.
				{10 * time.Second, a, true, 0}, {10 * time.Second, a, true, 0},
				{10 * time.Second, a, false, 100 * ms},
			},
		},
		{
			name: "burst of one",
			cfg:  Config{PerIP: Bucket{Rate: 4, Burst: 1}},
			steps: []step{
				{0, a, true, 0}, {1 * ms, a, false, 249 * ms}, {250 * ms, a, true, 0}, {260 * ms, a, false, 240 * ms},
			},
		},
		{
			name: "slow rate",
			cfg:  Config{PerIP: Bucket{Rate: 0.5, Burst: 1}},
			steps: []step{
				{0, a, true, 0}, {time.Second, a, false, time.Second}, {2 * time.Second, a, true, 0},
			},
		},
		{
			name:  "off",
			cfg:   Config{},
			steps: []step{{0, a, true, 0}, {0, a, true, 0}, {0, a, true, 0}, {0, b, true, 0}},
		},
		{
			name: "refused requests take no token",
			cfg:  Config{PerIP: Bucket{Rate: 1, Burst: 1}},
			steps: []step{
				{0, a, true, 0}, {100 * ms, a, false, 900 * ms}, {200 * ms, a, false, 800 * ms},
				{900 * ms, a, false, 100 * ms}, {time.Second, a, true, 0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, c := newTestLimiter(t, tc.cfg)
			runSteps(t, l, c, tc.steps)
		})
	}
}

// TestSteadyRate: requests every 10 ms against 10 a second with a burst
// of 5 let through the burst, then exactly the rate.
func TestSteadyRate(t *testing.T) {
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 10, Burst: 5}})
	a := addr("198.51.100.7")
	allowed := 0
	for at := time.Duration(0); at < 10*time.Second; at += 10 * time.Millisecond {
		c.Set(at)
		if ok, _ := l.Allow(a); ok {
			allowed++
		}
	}
	// Over [0, 9.99 s]: the burst of 5, then one every 100 ms from the
	// first refill on: at 0.1 s, … 9.9 s.
	if want := 5 + 99; allowed != want {
		t.Fatalf("allowed %d, want %d", allowed, want)
	}
}

func TestPrefixes(t *testing.T) {
	s := time.Second
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{
			name: "IPv4 /24 shared",
			cfg:  Config{PerPrefix: Bucket{Rate: 1, Burst: 2}},
			steps: []step{
				{0, "10.1.2.3", true, 0}, {0, "10.1.2.200", true, 0},
				{0, "10.1.2.4", false, s},
				{0, "10.1.3.4", true, 0}, // another /24
				{0, "::ffff:10.1.2.5", false, s},
				{s, "10.1.2.99", true, 0},
			},
		},
		{
			name: "IPv6 /48 shared",
			cfg:  Config{PerPrefix: Bucket{Rate: 1, Burst: 2}},
			steps: []step{
				{0, "2001:db8:1::1", true, 0}, {0, "2001:db8:1:ffff:ffff:ffff:ffff:ffff", true, 0},
				{0, "2001:db8:1:8000::9", false, s},
				{0, "2001:db8:2::1", true, 0},      // another /48
				{0, "2001:db8:0:ffff::1", true, 0}, // and another
			},
		},
		{
			name: "other prefix lengths",
			cfg:  Config{PerPrefix: Bucket{Rate: 1, Burst: 1}, IPv4Prefix: 16, IPv6Prefix: 64},
			steps: []step{
				{0, "10.1.2.3", true, 0}, {0, "10.1.200.1", false, s}, {0, "10.2.0.1", true, 0},
				{0, "2001:db8:1:1::1", true, 0}, {0, "2001:db8:1:1:ffff::1", false, s}, {0, "2001:db8:1:2::1", true, 0},
			},
		},
		{
			name: "full-length prefixes are addresses",
			cfg:  Config{PerPrefix: Bucket{Rate: 1, Burst: 1}, IPv4Prefix: 32, IPv6Prefix: 128},
			steps: []step{
				{0, "10.1.2.3", true, 0}, {0, "10.1.2.3", false, s}, {0, "10.1.2.4", true, 0},
				{0, "2001:db8::1", true, 0}, {0, "2001:db8::1", false, s}, {0, "2001:db8::2", true, 0},
			},
		},
		{
			name: "a refusal by the address takes no prefix token",
			cfg:  Config{PerIP: Bucket{Rate: 1, Burst: 1}, PerPrefix: Bucket{Rate: 1, Burst: 2}},
			steps: []step{
				{0, "10.0.0.1", true, 0},
				{0, "10.0.0.1", false, s}, {0, "10.0.0.1", false, s}, {0, "10.0.0.1", false, s},
				{0, "10.0.0.2", true, 0}, // the prefix's second token is still there
				{0, "10.0.0.3", false, s},
			},
		},
		{
			name: "a refusal by the prefix takes no address token",
			cfg:  Config{PerIP: Bucket{Rate: 0.1, Burst: 1}, PerPrefix: Bucket{Rate: 1, Burst: 1}},
			steps: []step{
				{0, "10.0.0.2", true, 0},
				{0, "10.0.0.1", false, s},
				// Had that refusal taken 10.0.0.1's token, it would wait 10 s.
				{s, "10.0.0.1", true, 0},
				{2 * s, "10.0.0.1", false, 9 * s},
			},
		},
		{
			name: "the retry is the longer wait of the two",
			cfg:  Config{PerIP: Bucket{Rate: 0.25, Burst: 1}, PerPrefix: Bucket{Rate: 1, Burst: 1}},
			steps: []step{
				{0, "10.0.0.1", true, 0},
				{0, "10.0.0.1", false, 4 * s}, // address: 4 s, prefix: 1 s
				{0, "10.0.0.2", false, s},     // prefix only
				{3 * s, "10.0.0.1", false, s},
				{4 * s, "10.0.0.1", true, 0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, c := newTestLimiter(t, tc.cfg)
			runSteps(t, l, c, tc.steps)
		})
	}
}

func TestAddressForms(t *testing.T) {
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 1, Burst: 1}})
	// An IPv4-mapped address is its IPv4 address.
	runSteps(t, l, c, []step{{0, "192.0.2.9", true, 0}, {0, "::ffff:192.0.2.9", false, time.Second}})
	// Zones are ignored.
	runSteps(t, l, c, []step{{0, "fe80::1%eth0", true, 0}, {0, "fe80::1%eth1", false, time.Second}, {0, "fe80::1", false, time.Second}})
	// The zero Addr shares the unspecified address's bucket.
	if ok, _ := l.Allow(netip.Addr{}); !ok {
		t.Fatal("the first zero Addr was refused")
	}
	if ok, _ := l.Allow(addr("::")); ok {
		t.Fatal(":: was allowed after the zero Addr took the bucket")
	}

	prefixes := []struct{ addr, want string }{
		{"192.0.2.9", "192.0.2.0/24"},
		{"::ffff:192.0.2.9", "192.0.2.0/24"},
		{"2001:db8:aa:bb::1", "2001:db8:aa::/48"},
		{"fe80::1%eth0", "fe80::/48"},
	}
	for _, p := range prefixes {
		if got := l.Prefix(addr(p.addr)).String(); got != p.want {
			t.Errorf("Prefix(%s) = %s, want %s", p.addr, got, p.want)
		}
	}
	if got := l.Prefix(netip.Addr{}); got.IsValid() {
		t.Errorf("Prefix of the zero Addr = %v, want the zero Prefix", got)
	}
}

func TestRate(t *testing.T) {
	// RateWindow 10 s: each request adds 0.1/s.
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 1, Burst: 1}})
	a, b, other := addr("203.0.113.1"), addr("203.0.113.2"), addr("198.51.100.1")
	for range 10 {
		l.Allow(a) // refused after the first, counted all the same
	}
	for range 5 {
		l.Allow(b)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9 }
	halfLife := time.Duration(math.Round(10 * math.Ln2 * float64(time.Second)))
	checks := []struct {
		at                   time.Duration
		a, b, prefix, others float64
	}{
		{0, 1, 0.5, 1.5, 0},
		{halfLife, 0.5, 0.25, 0.75, 0},
		{10 * time.Second, math.Exp(-1), 0.5 * math.Exp(-1), 1.5 * math.Exp(-1), 0},
	}
	for _, ch := range checks {
		c.Set(ch.at)
		if got := l.Rate(a); !near(got, ch.a) {
			t.Errorf("at %v: Rate(a) = %v, want %v", ch.at, got, ch.a)
		}
		if got := l.Rate(b); !near(got, ch.b) {
			t.Errorf("at %v: Rate(b) = %v, want %v", ch.at, got, ch.b)
		}
		if got := l.PrefixRate(a); !near(got, ch.prefix) {
			t.Errorf("at %v: PrefixRate = %v, want %v", ch.at, got, ch.prefix)
		}
		if got := l.Rate(other) + l.PrefixRate(other); got != ch.others {
			t.Errorf("at %v: an address never seen has rate %v", ch.at, got)
		}
	}

	// A steady 20 requests a second reads 20 ± 1/(2·RateWindow), to
	// within 1 % of that margin.
	l, c = newTestLimiter(t, Config{RateWindow: 5 * time.Second})
	for at := time.Duration(0); at < time.Minute; at += 50 * time.Millisecond {
		c.Set(at)
		l.Allow(a)
		if r := l.Rate(a); at > 30*time.Second && math.Abs(r-20) > 0.101 {
			t.Fatalf("at %v: Rate = %v, want 20 ± 0.1", at, r)
		}
	}
}

func TestEviction(t *testing.T) {
	// 4 entries, one shard: an exact LRU.
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 1, Burst: 1}, TableSize: 4})
	s := time.Second
	runSteps(t, l, c, []step{
		{0, "10.0.0.1", true, 0}, {0, "10.0.1.1", true, 0}, {0, "10.0.2.1", true, 0}, {0, "10.0.3.1", true, 0},
		{0, "10.0.0.1", false, s}, // touched: now the most recently used
		{0, "10.0.4.1", true, 0},  // evicts 10.0.1.1, the least recently used
	})
	if r := l.Rate(addr("10.0.1.1")); r != 0 {
		t.Fatalf("evicted address has rate %v", r)
	}
	runSteps(t, l, c, []step{
		{0, "10.0.1.1", true, 0},  // forgotten: a full bucket again; evicts 10.0.2.1
		{0, "10.0.0.1", false, s}, // still tracked
		{0, "10.0.3.1", false, s}, // still tracked
		{0, "10.0.2.1", true, 0},  // forgotten; evicts 10.0.4.1
		{0, "10.0.4.1", true, 0},  // forgotten
		{0, "10.0.0.1", false, s}, // tracked throughout
		{0, "::ffff:10.0.4.1", false, s},
	})
	for _, tb := range []*table{l.ips, l.prefixes} {
		if n := tracked(tb); n != 4 {
			t.Errorf("table tracks %d keys, want 4", n)
		}
	}
}

// tracked counts a table's keys, checking its shards' LRU lists.
func tracked(tb *table) int {
	n := 0
	for i := range tb.shards {
		s := &tb.shards[i]
		s.mu.Lock()
		links := 0
		for j := s.head; j != none; j = s.entries[j].next {
			links++
		}
		if links != len(s.index) || len(s.index) > s.capacity {
			panic(fmt.Sprintf("shard %d: %d linked, %d indexed, capacity %d", i, links, len(s.index), s.capacity))
		}
		n += len(s.index)
		s.mu.Unlock()
	}
	return n
}

func TestTableSize(t *testing.T) {
	tests := []struct {
		size, shards int
	}{
		{1, 1}, {4, 1}, {127, 1}, {128, 2}, {1000, 8}, {2048, 32}, {4096, 64}, {DefaultTableSize, 64}, {1 << 20, 64},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			tb := newTable(tc.size)
			if len(tb.shards) != tc.shards {
				t.Errorf("%d shards, want %d", len(tb.shards), tc.shards)
			}
			total := 0
			for i := range tb.shards {
				total += tb.shards[i].capacity
			}
			if total != tc.size {
				t.Errorf("capacity %d, want %d", total, tc.size)
			}
		})
	}
	// A sharded table fills to exactly its size and no more.
	l, _ := newTestLimiter(t, Config{TableSize: 4096})
	for i := range 40_000 {
		l.Allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	if n := tracked(l.ips); n != 4096 {
		t.Errorf("address table tracks %d, want 4096", n)
	}
	if n := tracked(l.prefixes); n != 40_000/256+1 {
		t.Errorf("prefix table tracks %d, want %d", n, 40_000/256+1)
	}
}

// TestConcurrent: with the clock stopped, exactly the burst gets through
// however many goroutines ask at once (run with -race).
func TestConcurrent(t *testing.T) {
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 1, Burst: 3}, PerPrefix: Bucket{Rate: 1, Burst: 50}, TableSize: 1 << 12})
	c.Set(time.Hour)
	const workers, prefixes, perPrefix = 8, 20, 40
	var allowed [prefixes][perPrefix]atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for round := range 4 {
				for p := range prefixes {
					for i := range perPrefix {
						a := netip.AddrFrom4([4]byte{10, byte(p), 0, byte(i)})
						if (w+round)%2 == 1 {
							a = netip.AddrFrom16(a.As16()) // the mapped form
						}
						if ok, _ := l.Allow(a); ok {
							allowed[p][i].Add(1)
						}
						l.Rate(a)
					}
				}
			}
		})
	}
	wg.Wait()
	for p := range prefixes {
		sum := int32(0)
		for i := range perPrefix {
			n := allowed[p][i].Load()
			if n > 3 {
				t.Errorf("10.%d.0.%d allowed %d times, burst 3", p, i, n)
			}
			sum += n
		}
		if sum != 50 {
			t.Errorf("prefix 10.%d.0.0/24 allowed %d, want exactly its burst 50", p, sum)
		}
	}
}

// TestWaitAt: WaitAt tells what AllowAt would decide without taking a
// token: a caller that charges only failures refuses before acting.
func TestWaitAt(t *testing.T) {
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 1, Burst: 2}, PerPrefix: Bucket{Rate: 10, Burst: 3}})
	a, b := addr("192.0.2.1"), addr("192.0.2.2")
	for range 5 {
		if w := l.WaitAt(a, c.Now()); w != 0 {
			t.Fatalf("WaitAt of an unused address = %v", w)
		}
	}
	l.AllowAt(a, c.Now())
	l.AllowAt(a, c.Now())
	if w := l.WaitAt(a, c.Now()); w != time.Second {
		t.Fatalf("WaitAt after the burst = %v, want 1s", w)
	}
	if ok, wait := l.AllowAt(a, c.Now()); ok || wait != time.Second {
		t.Fatalf("AllowAt disagrees with WaitAt: %v, %v", ok, wait)
	}
	// The prefix bucket counts too: b has one token of the prefix's left.
	l.AllowAt(b, c.Now())
	if w := l.WaitAt(b, c.Now()); w == 0 {
		t.Fatal("WaitAt ignores the prefix's empty bucket")
	}
	c.Add(time.Second)
	if w := l.WaitAt(a, c.Now()); w != 0 {
		t.Fatalf("WaitAt a second later = %v", w)
	}
	if r := l.Rate(a); r <= 0 {
		t.Fatalf("rate %v", r)
	}
}

// TestDecay checks the series decay uses for small x against math.Exp,
// on both sides of the switch.
func TestDecay(t *testing.T) {
	for _, x := range []float64{1e-12, 1e-9, 1e-6, 1e-4, 1.0/1024 - 1e-9, 1.0 / 1024, 0.01, 0.5, 3, 40} {
		got, want := decay(x), math.Exp(-x)
		if d := math.Abs(got-want) / want; d > 1e-9 {
			t.Errorf("decay(%g) = %.17g, want %.17g (relative error %g)", x, got, want, d)
		}
	}
}
