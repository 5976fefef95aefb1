package challenge

import (
	"context"
	"errors"
	"strings"
	"testing"
)

const (
	ja4Chrome = "t13d1516h2_8daaf6152771_e5627efa2ab1"
	ja4Tool   = "t13d1312h2_f57a46bbacb6_ab7e3b40a677"
	ja4Tool2  = "t13i190900_0f2cb44170f4_5c4c70b73fa0"
)

func TestJA4Signal(t *testing.T) {
	s, err := NewJA4Signal(JA4Options{
		Bad:     []JA4Entry{{ja4Tool, 1}, {ja4Tool2, 0.6}},
		Good:    []string{ja4Chrome},
		Unknown: 0.1,
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ja4  string
		want Finding
	}{
		{"not seen", "", Finding{}},
		{"good", ja4Chrome, Finding{}},
		{"bad", ja4Tool, Finding{1, ReasonJA4KnownBad}},
		{"bad with its own suspicion", ja4Tool2, Finding{0.6, ReasonJA4KnownBad}},
		{"unknown", "t13d1517h2_8daaf6152771_cb7bf5808d99", Finding{0.1, ReasonJA4Unknown}},
		{"garbage is unknown", "nonsense", Finding{0.1, ReasonJA4Unknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Check(context.Background(), &Request{JA4: tt.ja4})
			if err != nil || got != tt.want {
				t.Errorf("Check(%q) = %+v, %v; want %+v", tt.ja4, got, err, tt.want)
			}
		})
	}
}

func TestJA4SignalUnknownZero(t *testing.T) {
	s, err := NewJA4Signal(JA4Options{Bad: []JA4Entry{{ja4Tool, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Check(context.Background(), &Request{JA4: ja4Chrome}); got != (Finding{}) {
		t.Errorf("unknown with Unknown 0: %+v", got)
	}
	// A bad entry with suspicion 0 is as good as a good one.
	s, err = NewJA4Signal(JA4Options{Bad: []JA4Entry{{ja4Tool, 0}}, Unknown: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Check(context.Background(), &Request{JA4: ja4Tool}); got != (Finding{}) {
		t.Errorf("bad with suspicion 0: %+v", got)
	}
}

func TestNewJA4SignalInvalid(t *testing.T) {
	_, err := NewJA4Signal(JA4Options{
		Bad:     []JA4Entry{{"nope", 1}, {ja4Tool, 1.5}, {ja4Chrome, 1}},
		Good:    []string{ja4Chrome, "t13d1516h2_8daaf6152771_E5627EFA2AB1"},
		Unknown: -0.1,
	})
	if err == nil {
		t.Fatal("accepted")
	}
	if !errors.Is(err, ErrInvalidJA4) {
		t.Errorf("%v does not wrap ErrInvalidJA4", err)
	}
	for _, w := range []string{`bad[0] "nope"`, "bad[1]: suspicion 1.5", "good[0]: " + ja4Chrome + " is listed twice", "good[1]", "unknown suspicion -0.1"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// Fingerprint data: tools are bad, browsers good, and the lists given
// override it.
func TestJA4SignalData(t *testing.T) {
	s, err := NewJA4Signal(JA4Options{
		Data: append(DefaultFingerprints(), Fingerprint{Client: "curl-again", Kind: FingerprintTool, JA4: ja4Curl}),
		Bad:  []JA4Entry{{ja4Python, 0.5}},
		Good: []string{ja4Tool},
	})
	if err != nil {
		t.Fatal(err)
	}
	for ja4, want := range map[string]Finding{
		ja4Curl:     {1, ReasonJA4KnownBad},
		ja4Chromium: {},
		// The same clients resuming a session: other extensions.
		"t13d3113h2_e8f1e7e78f70_0123456789ab": {1, ReasonJA4KnownBad},
		"t13d1518h2_8daaf6152771_0123456789ab": {},
		// Another stack is unknown.
		"t13d1518h2_0123456789ab_0123456789ab": {},
		ja4Python:                              {0.5, ReasonJA4KnownBad},
		ja4Tool:                                {},
	} {
		if got, _ := s.Check(context.Background(), &Request{JA4: ja4}); got != want {
			t.Errorf("%s: %+v, want %+v", ja4, got, want)
		}
	}
}
