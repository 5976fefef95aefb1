package challenge

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// The signals run on every join: their Check allocates nothing (the rate
// signal once a key is tracked).
func TestSignalAllocs(t *testing.T) {
	h, err := NewHeaderSignal(HeaderOptions{ExtraTools: []string{"shopbot"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := NewJA4Signal(JA4Options{Bad: []JA4Entry{{ja4Tool, 1}}, Unknown: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	rate, err := NewRateSignal(RateOptions{Window: time.Minute, PerIP: RateLimit{20, 120}, PerPrefix: RateLimit{100, 1000},
		PerFingerprint: RateLimit{100, 1000}, Long: RateWindow{Window: time.Hour, PerIP: RateLimit{20, 120}}, MaxKeys: 10})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := NewConsistencySignal(ConsistencyOptions{Data: DefaultFingerprints()})
	if err != nil {
		t.Fatal(err)
	}
	kb, err := NewKnownBadSignal(KnownBadLists{Visitors: []string{"v1"}, JA4: []string{ja4Tool}, IPs: []string{"192.0.2.66"}})
	if err != nil {
		t.Fatal(err)
	}
	chrome := hdrReq(hdrChromeH1)
	chrome.IP = netip.MustParseAddr("2001:db8::1")
	chrome.JA4 = ja4Chrome
	chrome.Visitor = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name string
		s    Signal
		r    *Request
	}{
		{"headers chrome", h, chrome},
		{"headers firefox", h, hdrReq(hdrFirefox)},
		{"headers tool", h, hdrReq("Host: x\nUser-Agent: curl/8.5.0")},
		{"ja4", j, chrome},
		{"rate", rate, chrome},
		{"consistency", cons, chrome},
		{"client", ClientSignal{}, &Request{Client: &ClientReport{Missing: []string{"Worker"}, SolveMillis: 1, Hashes: 1 << 40}}},
		{"known bad", kb, chrome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			tt.s.Check(ctx, tt.r) // a rate key is tracked from here on
			if n := testing.AllocsPerRun(100, func() { tt.s.Check(ctx, tt.r) }); n != 0 {
				t.Errorf("%v allocations per Check, want 0", n)
			}
		})
	}
}
