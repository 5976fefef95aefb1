package challenge

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultFingerprints(t *testing.T) {
	fs := DefaultFingerprints()
	kinds := map[string]int{}
	for _, f := range fs {
		kinds[f.Kind]++
	}
	if kinds[FingerprintTool] < 5 || kinds[FingerprintBrowser] < 1 {
		t.Errorf("shipped data has %v; want tools and a browser", kinds)
	}
	fs[0].Client = "changed"
	if DefaultFingerprints()[0].Client == "changed" {
		t.Error("DefaultFingerprints shares its slice")
	}
}

func TestParseFingerprints(t *testing.T) {
	good := `{"about": "x", "fingerprints": [
	  {"client": "curl", "kind": "tool", "ja4": "` + ja4Curl + `", "headers": "fab26599bee0", "version": "8", "recorded": "2026-11-26"},
	  {"client": "chromium", "kind": "browser", "family": "chromium", "ja4": "` + ja4Chromium + `"}]}`
	fs, err := ParseFingerprints([]byte(good))
	if err != nil || len(fs) != 2 || fs[1].Family != FamilyChromium {
		t.Fatalf("ParseFingerprints = %+v, %v", fs, err)
	}
	bad := []struct{ name, doc, want string }{
		{"not json", `{`, "unexpected EOF"},
		{"unknown top field", `{"fingerprints": [], "extra": 1}`, `unknown field "extra"`},
		{"unknown entry field", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `", "x": 1}]}`, `unknown field "x"`},
		{"trailing data", `{"fingerprints": []} {}`, "data after"},
		{"no client", `{"fingerprints": [{"kind": "tool", "ja4": "` + ja4Curl + `"}]}`, "client must be"},
		{"bad kind", `{"fingerprints": [{"client": "a", "kind": "robot", "ja4": "` + ja4Curl + `"}]}`, "kind must be"},
		{"tool with family", `{"fingerprints": [{"client": "a", "kind": "tool", "family": "chromium", "ja4": "` + ja4Curl + `"}]}`, "no family"},
		{"browser without family", `{"fingerprints": [{"client": "a", "kind": "browser", "ja4": "` + ja4Curl + `"}]}`, "family must be"},
		{"bad ja4", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "t13"}]}`, "not a JA4"},
		{"bad headers", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `", "headers": "XYZ"}]}`, "not a header fingerprint"},
		{"ja4 both kinds", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `"},
			{"client": "b", "kind": "browser", "family": "webkit", "ja4": "` + ja4Curl + `"}]}`, "both tool and browser"},
		{"stack both kinds", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `"},
			{"client": "b", "kind": "browser", "family": "webkit", "ja4": "t13d3113h2_e8f1e7e78f70_0123456789ab"}]}`, "both tool and browser"},
		{"headers both kinds", `{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `", "headers": "0123456789ab"},
			{"client": "b", "kind": "browser", "family": "webkit", "ja4": "` + ja4Chromium + `", "headers": "0123456789ab"}]}`, "both tool and browser"},
		{"too big", `{"about": "` + strings.Repeat("x", MaxFingerprintDataSize) + `"}`, "over"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFingerprints([]byte(tt.doc))
			if !errors.Is(err, ErrInvalidFingerprints) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidFingerprints with %q", err, tt.want)
			}
		})
	}
}

// FuzzParseFingerprints: operators' data files are read with it. It must
// not panic, and what it accepts builds both signals that read it.
func FuzzParseFingerprints(f *testing.F) {
	f.Add(fingerprintsJSON)
	f.Add([]byte(`{"fingerprints": [{"client": "a", "kind": "tool", "ja4": "` + ja4Curl + `", "headers": "0123456789ab"}]}`))
	f.Add([]byte(`{"fingerprints": null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := ParseFingerprints(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidFingerprints) {
				t.Fatalf("error %v does not wrap ErrInvalidFingerprints", err)
			}
			return
		}
		if _, err := NewConsistencySignal(ConsistencyOptions{Data: fs}); err != nil {
			t.Fatalf("accepted data fails the consistency signal: %v", err)
		}
		if _, err := NewJA4Signal(JA4Options{Data: fs}); err != nil {
			t.Fatalf("accepted data fails the ja4 signal: %v", err)
		}
	})
}
