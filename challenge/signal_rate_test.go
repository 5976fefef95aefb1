package challenge

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
)

func newRateTest(t *testing.T, o RateOptions) (*RateSignal, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	o.Now = clock.Now
	if o.Window == 0 {
		o.Window = time.Minute
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = 1000
	}
	s, err := NewRateSignal(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, clock
}

func rateHit(t *testing.T, s *RateSignal, ip string) Finding {
	t.Helper()
	f, err := s.Check(context.Background(), &Request{IP: netip.MustParseAddr(ip)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRateSignalRamp(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 10, Hard: 20}})
	for i := 1; i <= 25; i++ {
		f := rateHit(t, s, "192.0.2.1")
		var want Finding
		switch {
		case i >= 20:
			want = Finding{1, ReasonRateIP}
		case i > 10:
			want = Finding{float64(i-10) / 10, ReasonRateIP}
		}
		if math.Abs(f.Suspicion-want.Suspicion) > 1e-9 || f.Reason != want.Reason {
			t.Fatalf("request %d: %+v, want %+v", i, f, want)
		}
	}
	// Another address is not affected.
	if f := rateHit(t, s, "192.0.2.2"); f != (Finding{}) {
		t.Errorf("other address: %+v", f)
	}
}

// The previous window counts by the share of it still inside the sliding
// window.
func TestRateSignalSlidingWindow(t *testing.T) {
	s, clock := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 100}})
	for range 40 {
		rateHit(t, s, "192.0.2.1")
	}
	// A quarter into the next window: 40 × 0.75 + 1.
	clock.Add(time.Minute + 15*time.Second)
	if f := rateHit(t, s, "192.0.2.1"); math.Abs(f.Suspicion-0.31) > 1e-9 {
		t.Errorf("a quarter into the next window: suspicion %v, want 0.31", f.Suspicion)
	}
	// Two windows on, the old counts are gone: 1 request.
	clock.Add(2 * time.Minute)
	if f := rateHit(t, s, "192.0.2.1"); math.Abs(f.Suspicion-0.01) > 1e-9 {
		t.Errorf("two windows on: suspicion %v, want 0.01", f.Suspicion)
	}
}

// Request.Now is the time when set; an earlier stamp counts into the
// current window.
func TestRateSignalRequestTime(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 10}})
	at := time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)
	ip := netip.MustParseAddr("192.0.2.9")
	for i, d := range []time.Duration{0, time.Second, -time.Hour} {
		f, _ := s.Check(context.Background(), &Request{IP: ip, Now: at.Add(d)})
		if want := float64(i+1) / 10; math.Abs(f.Suspicion-want) > 1e-9 {
			t.Errorf("request %d: %v, want %v", i, f.Suspicion, want)
		}
	}
}

func TestRateSignalPrefix(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 5, Hard: 10}, PerPrefix: RateLimit{Soft: 10, Hard: 20}})
	// 20 addresses of one /24, one request each: per-IP clean, the
	// prefix full.
	var f Finding
	for i := range 20 {
		f = rateHit(t, s, netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}).String())
	}
	if f != (Finding{1, ReasonRatePrefix}) {
		t.Errorf("20th address of a /24: %+v", f)
	}
	if f := rateHit(t, s, "198.51.101.1"); f != (Finding{}) {
		t.Errorf("next /24: %+v", f)
	}
	// IPv4-mapped IPv6 is the same address and prefix.
	if f := rateHit(t, s, "::ffff:198.51.100.77"); f != (Finding{1, ReasonRatePrefix}) {
		t.Errorf("mapped address: %+v", f)
	}
	// An IPv6 host is its /64: 15 addresses of one are one client.
	for i := range 15 {
		f = rateHit(t, s, netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 15: byte(i)}).String())
	}
	if f != (Finding{1, ReasonRateIP}) {
		t.Errorf("15th address of a /64: %+v", f)
	}
	// Its /48 is the prefix: another /64 of it is the 16th request there.
	if f := rateHit(t, s, "2001:db8:0:2::1"); math.Abs(f.Suspicion-0.6) > 1e-9 || f.Reason != ReasonRatePrefix {
		t.Errorf("another /64 of the /48: %+v", f)
	}
	if f := rateHit(t, s, "2001:db8:1::1"); f != (Finding{}) {
		t.Errorf("next /48: %+v", f)
	}
	// The per-IP reason wins when it is the stronger.
	for range 9 {
		f = rateHit(t, s, "203.0.113.1")
	}
	if f.Reason != ReasonRateIP {
		t.Errorf("one address, 9 requests: %+v, want %s", f, ReasonRateIP)
	}
}

func TestRateSignalNoAddress(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 1}})
	if f, err := s.Check(context.Background(), &Request{}); f != (Finding{}) || err != nil {
		t.Errorf("no address: %+v, %v", f, err)
	}
}

// Memory is bounded: the least recently seen keys are forgotten.
func TestRateSignalMaxKeys(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 2}, PerPrefix: RateLimit{Soft: 0, Hard: 1000}, MaxKeys: 3})
	rateHit(t, s, "192.0.2.1")
	for i := 2; i <= 5; i++ {
		rateHit(t, s, netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}).String())
	}
	if n := s.ips.lru.Len(); n != 3 {
		t.Errorf("%d addresses tracked, want 3", n)
	}
	// 192.0.2.5 is still tracked: its second request is at the hard
	// limit. 192.0.2.1 was evicted: it starts again at 1 request.
	if f := rateHit(t, s, "192.0.2.5"); f != (Finding{1, ReasonRateIP}) {
		t.Errorf("tracked address: %+v, want full suspicion", f)
	}
	if f := rateHit(t, s, "192.0.2.1"); f != (Finding{0.5, ReasonRateIP}) {
		t.Errorf("evicted address: %+v, want a first request's 0.5", f)
	}
}

func TestRateSignalConcurrent(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 1_000_000}, PerPrefix: RateLimit{Soft: 0, Hard: 1_000_000}, MaxKeys: 64})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				rateHit(t, s, netip.AddrFrom4([4]byte{10, byte(g), 0, byte(i % 7)}).String())
			}
		})
	}
	wg.Wait()
	// Every request counted: each goroutine had its own /24.
	if f := rateHit(t, s, "10.3.0.1"); math.Abs(f.Suspicion-501.0/1_000_000) > 1e-9 {
		t.Errorf("after 500 requests in 10.3.0.0/24: %+v", f)
	}
}

func TestNewRateSignalInvalid(t *testing.T) {
	_, err := NewRateSignal(RateOptions{
		Window:    500 * time.Millisecond,
		PerIP:     RateLimit{Soft: 10, Hard: 10},
		PerPrefix: RateLimit{Soft: -1, Hard: 5},
	})
	if !errors.Is(err, ErrInvalidRateOptions) {
		t.Fatalf("%v, want ErrInvalidRateOptions", err)
	}
	for _, w := range []string{"window 500ms", "per-IP limit", "per-prefix limit", "max keys 0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	// Both limits off is allowed (and judges nothing).
	s, err := NewRateSignal(RateOptions{Window: time.Minute, MaxKeys: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f := rateHit(t, s, "192.0.2.1"); f != (Finding{}) {
		t.Errorf("limits off: %+v", f)
	}
}

// Prefix lengths are options.
func TestRateSignalPrefixBits(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerPrefix: RateLimit{Soft: 0, Hard: 2}, PrefixBitsV4: 16, PrefixBitsV6: 64})
	rateHit(t, s, "198.51.1.1")
	if f := rateHit(t, s, "198.51.200.1"); f != (Finding{1, ReasonRatePrefix}) {
		t.Errorf("second request of a /16: %+v", f)
	}
	rateHit(t, s, "2001:db8:0:1::1")
	if f := rateHit(t, s, "2001:db8:0:2::1"); f != (Finding{0.5, ReasonRatePrefix}) {
		t.Errorf("another /64: %+v, want a first request's 0.5", f)
	}
}

// A join is judged on the rates its challenge fetch left, and not
// counted: a place counts once.
func TestRateSignalJoinNotCounted(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 0, Hard: 10}})
	ip := netip.MustParseAddr("192.0.2.1")
	join := func() Finding {
		f, _ := s.Check(context.Background(), &Request{IP: ip, Join: true})
		return f
	}
	if f := join(); f != (Finding{}) {
		t.Errorf("a join before any fetch: %+v", f)
	}
	if n := s.ips.lru.Len(); n != 0 {
		t.Errorf("a join alone tracks %d keys, want 0", n)
	}
	for i := 1; i <= 3; i++ {
		rateHit(t, s, "192.0.2.1")
		for range 3 {
			if f := join(); math.Abs(f.Suspicion-float64(i)/10) > 1e-9 {
				t.Fatalf("join after %d fetches: %+v", i, f)
			}
		}
	}
}

// The long window catches a client that paces itself under the short
// window's limits.
func TestRateSignalLongWindow(t *testing.T) {
	s, clock := newRateTest(t, RateOptions{PerIP: RateLimit{Soft: 10, Hard: 20},
		Long: RateWindow{Window: time.Hour, PerIP: RateLimit{Soft: 30, Hard: 60}}})
	var f Finding
	for range 6 { // 9 requests every other minute: 9 in any minute
		for range 9 {
			f = rateHit(t, s, "192.0.2.1")
		}
		clock.Add(2 * time.Minute)
	}
	// 54 in the hour: (54-30)/30.
	if math.Abs(f.Suspicion-0.8) > 1e-9 || f.Reason != ReasonRateIPLong {
		t.Errorf("54 requests paced over 12 minutes: %+v, want 0.8 %s", f, ReasonRateIPLong)
	}
}

// Fingerprints are counted across addresses, except browsers'.
func TestRateSignalFingerprint(t *testing.T) {
	s, _ := newRateTest(t, RateOptions{PerFingerprint: RateLimit{Soft: 0, Hard: 4}, Browsers: []string{ja4Chromium}})
	hit := func(ip, ja4 string, hs []Header) Finding {
		f, _ := s.Check(context.Background(), &Request{IP: netip.MustParseAddr(ip), JA4: ja4, Headers: hs})
		return f
	}
	curl := []Header{{"Host", "x"}, {"User-Agent", "curl/8"}, {"Accept", "*/*"}}
	for i := range 3 {
		hit(netip.AddrFrom4([4]byte{192, 0, byte(i), 1}).String(), ja4Curl, curl)
	}
	if f := hit("203.0.113.1", ja4Curl, curl); f != (Finding{1, ReasonRateFingerprint}) {
		t.Errorf("4th request of one fingerprint from 4 networks: %+v", f)
	}
	// A resumed session's JA4 is the same client.
	if f := hit("203.0.113.9", "t13d3113h2_e8f1e7e78f70_0123456789ab", curl); f != (Finding{1, ReasonRateFingerprint}) {
		t.Errorf("5th request, resumed: %+v", f)
	}
	// Other headers are another fingerprint.
	if f := hit("203.0.113.2", ja4Curl, chromeHeaders); f != (Finding{0.25, ReasonRateFingerprint}) {
		t.Errorf("same TLS, other headers: %+v", f)
	}
	// Browsers and requests without a JA4 are not counted.
	for range 10 {
		if f := hit("203.0.113.3", ja4Chromium, chromeHeaders); f != (Finding{}) {
			t.Fatalf("browser: %+v", f)
		}
		if f := hit("203.0.113.3", "t13d1518h2_8daaf6152771_0123456789ab", chromeHeaders); f != (Finding{}) {
			t.Fatalf("browser resuming a session: %+v", f)
		}
		if f := hit("203.0.113.3", "", curl); f != (Finding{}) {
			t.Fatalf("no JA4: %+v", f)
		}
	}
}

func TestNewRateSignalInvalidMore(t *testing.T) {
	_, err := NewRateSignal(RateOptions{Window: time.Hour, MaxKeys: 1,
		PerFingerprint: RateLimit{Soft: 3, Hard: 1},
		Long:           RateWindow{Window: time.Minute, PerIP: RateLimit{Soft: 2, Hard: 2}},
		PrefixBitsV4:   33, PrefixBitsV6: 8, Browsers: []string{"chrome"}})
	for _, w := range []string{"long window 1m0s is not longer", "per-fingerprint limit", "long per-IP limit",
		"IPv4 prefix /33", "IPv6 prefix /8", `browser 0: "chrome"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
}
