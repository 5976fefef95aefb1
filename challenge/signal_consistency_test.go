package challenge

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// JA4s of the fingerprint data (fingerprints.json), recorded here.
const (
	ja4Chromium = "t13d1517h2_8daaf6152771_cb7bf5808d99"
	ja4Curl     = "t13d3112h2_e8f1e7e78f70_b26ce05bbdd6"
	ja4Python   = "t13d1813h1_85036bcba153_d339722ba4af"
)

const (
	uaChrome  = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	uaFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaSafari  = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"
)

// withUA returns hs with its User-Agent replaced by ua.
func withUA(hs []Header, ua string) []Header {
	out := make([]Header, len(hs))
	copy(out, hs)
	for i := range out {
		if out[i].Name == "User-Agent" {
			out[i].Value = ua
		}
	}
	return out
}

func TestConsistencySignal(t *testing.T) {
	s, err := NewConsistencySignal(ConsistencyOptions{Data: DefaultFingerprints()})
	if err != nil {
		t.Fatal(err)
	}
	curlHeaders := []Header{{"Host", "localhost"}, {"User-Agent", uaChrome}, {"Accept", "*/*"}}
	tests := []struct {
		name    string
		headers []Header
		ja4     string
		want    Finding
	}{
		{"chrome", chromeHeaders, ja4Chromium, Finding{}},
		{"chrome without TLS seen", chromeHeaders, "", Finding{}},
		{"chrome, a later version's extensions", chromeHeaders, "t13d1518h2_8daaf6152771_0123456789ab", Finding{}},
		{"chrome over QUIC", chromeHeaders, "q13d1517h3_8daaf6152771_0123456789ab", Finding{}},
		{"go claiming chrome", chromeHeaders, ja4Tool, Finding{1, ReasonTLSTool}},
		{"curl claiming chrome", chromeHeaders, ja4Curl, Finding{1, ReasonTLSTool}},
		{"go resuming a session, claiming chrome", chromeHeaders, "t13d1313h2_f57a46bbacb6_0123456789ab", Finding{1, ReasonTLSTool}},
		{"chromium resuming a session, claiming firefox", withUA(chromeHeaders, uaFirefox), "t13d1518h2_8daaf6152771_0123456789ab",
			Finding{0.9, ReasonTLSOtherBrowser}},
		{"python claiming firefox", withUA(chromeHeaders, uaFirefox), ja4Python, Finding{1, ReasonTLSTool}},
		{"chromium claiming firefox", withUA(chromeHeaders, uaFirefox), ja4Chromium, Finding{0.9, ReasonTLSOtherBrowser}},
		{"chromium claiming safari", withUA(chromeHeaders, uaSafari), ja4Chromium, Finding{0.9, ReasonTLSOtherBrowser}},
		{"chrome with TLS 1.2", chromeHeaders, "t12d1517h2_8daaf6152771_0123456789ab", Finding{0.8, ReasonTLSNotBrowser}},
		{"chrome without h2", chromeHeaders, "t13d1517h1_8daaf6152771_0123456789ab", Finding{0.8, ReasonTLSNotBrowser}},
		{"chrome without ALPN", chromeHeaders, "t13d151600_8daaf6152771_0123456789ab", Finding{0.8, ReasonTLSNotBrowser}},
		{"chrome, another stack", chromeHeaders, "t13d1715h2_5b57614c22b0_3d5424432f57", Finding{0.7, ReasonTLSOtherStack}},
		{"firefox, unknown but browser-shaped", withUA(chromeHeaders, uaFirefox), "t13d1715h2_5b57614c22b0_3d5424432f57", Finding{}},
		{"safari with TLS 1.2", withUA(chromeHeaders, uaSafari), "t12d2014h2_a09f3c656075_14788d8d241b", Finding{0.8, ReasonTLSNotBrowser}},
		{"chrome 60, before TLS 1.3", withUA(chromeHeaders, "Mozilla/5.0 Chrome/60.0.3112.0 Safari/537.36"), "t12d1517h2_0123456789ab_0123456789ab",
			Finding{0.7, ReasonTLSOtherStack}},
		{"a tool saying so", withUA(chromeHeaders, "curl/8.5.0"), ja4Curl, Finding{}},
		{"no user agent", []Header{{"Host", "x"}}, ja4Curl, Finding{}},
		{"curl's headers claiming chrome", curlHeaders, "", Finding{0.8, ReasonHeadersTool}},
		{"curl's headers and TLS claiming chrome", curlHeaders, ja4Curl, Finding{1, ReasonTLSTool}},
		{"not a JA4", chromeHeaders, "nonsense", Finding{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Check(context.Background(), &Request{Headers: tt.headers, JA4: tt.ja4})
			if err != nil || got != tt.want {
				t.Errorf("Check = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestConsistencySignalNoData(t *testing.T) {
	s, err := NewConsistencySignal(ConsistencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Without data only the shape of the TLS is judged.
	for ja4, want := range map[string]Finding{
		ja4Tool:     {},
		ja4Python:   {0.8, ReasonTLSNotBrowser},
		ja4Chromium: {},
	} {
		if got, _ := s.Check(context.Background(), &Request{Headers: chromeHeaders, JA4: ja4}); got != want {
			t.Errorf("%s: %+v, want %+v", ja4, got, want)
		}
	}
}

func TestNewConsistencySignalErrors(t *testing.T) {
	_, err := NewConsistencySignal(ConsistencyOptions{Data: []Fingerprint{
		{Client: "a", Kind: FingerprintTool, JA4: "bad"},
		{Client: "b", Kind: FingerprintBrowser, Family: "opera", JA4: ja4Chromium},
		{Client: "c", Kind: "robot", JA4: ja4Chromium},
		{Client: "d", Kind: FingerprintTool, JA4: ja4Curl},
		{Client: "e", Kind: FingerprintBrowser, Family: FamilyChromium, JA4: ja4Curl},
		{Client: "f", Kind: FingerprintBrowser, Family: FamilyChromium, JA4: "t13d3113h2_e8f1e7e78f70_0123456789ab"},
	}})
	if !errors.Is(err, ErrInvalidConsistency) {
		t.Fatalf("err = %v, want ErrInvalidConsistency", err)
	}
	for _, want := range []string{"data[0]", "data[1]", "data[2]", "data[4]", "data[5] (f): the TLS stack"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func BenchmarkConsistencySignal(b *testing.B) {
	s, err := NewConsistencySignal(ConsistencyOptions{Data: DefaultFingerprints()})
	if err != nil {
		b.Fatal(err)
	}
	r := &Request{Headers: chromeHeaders, JA4: ja4Chromium}
	b.ReportAllocs()
	for b.Loop() {
		s.Check(context.Background(), r)
	}
}
