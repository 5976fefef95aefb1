package challenge

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Kinds of a Fingerprint.
const (
	// FingerprintTool is an HTTP library or automation tool.
	FingerprintTool = "tool"
	// FingerprintBrowser is a real browser (headless or not: a headless
	// Chromium has the TLS stack of a headful one).
	FingerprintBrowser = "browser"
)

// Browser families of a browser Fingerprint, as the User-Agent tells
// them apart (see HeaderSignal).
const (
	FamilyChromium = "chromium"
	FamilyFirefox  = "firefox"
	FamilyWebKit   = "webkit"
)

// MaxFingerprintDataSize bounds a fingerprint data file.
const MaxFingerprintDataSize = 16 << 20

// ErrInvalidFingerprints is returned (wrapped) by ParseFingerprints.
var ErrInvalidFingerprints = errors.New("challenge: invalid fingerprint data")

// Fingerprint is what one client looks like on the wire: the JA4 of its
// ClientHello and, for a tool, the HeaderFingerprint of the request it
// sends by default.
type Fingerprint struct {
	// Client names the client: "curl", "python-urllib", "go", "chromium".
	Client string `json:"client"`
	// Kind is FingerprintTool or FingerprintBrowser.
	Kind string `json:"kind"`
	// Family is a browser's family (FamilyChromium, FamilyFirefox,
	// FamilyWebKit); "" for a tool.
	Family string `json:"family,omitempty"`
	// JA4 is the client's TLS fingerprint (see ValidJA4).
	JA4 string `json:"ja4"`
	// Headers is, for a tool, the HeaderFingerprint of its default
	// request; "" when not recorded. (A browser's includes its version's
	// brand list, so it is not kept.)
	Headers string `json:"headers,omitempty"`
	// Version is the client's version where it was recorded, for people.
	Version string `json:"version,omitempty"`
	// Recorded is the date (YYYY-MM-DD) it was recorded, for people.
	Recorded string `json:"recorded,omitempty"`
}

// FingerprintData is the document of a fingerprint data file: the one
// waitroom ships (challenge/fingerprints.json) and operators' own.
type FingerprintData struct {
	// About says what the file is and how it is made.
	About string `json:"about,omitempty"`
	// Fingerprints are the clients, in any order.
	Fingerprints []Fingerprint `json:"fingerprints"`
}

//go:embed fingerprints.json
var fingerprintsJSON []byte

var defaultFingerprints = func() []Fingerprint {
	fs, err := ParseFingerprints(fingerprintsJSON)
	if err != nil {
		// The file is checked by the tests; a broken build must not start.
		panic(err)
	}
	return fs
}()

// DefaultFingerprints returns the fingerprints waitroom ships: those of
// common HTTP tools (Go's net/http, Python's urllib and requests, curl,
// Node, Java) as tools and of the Chromium the tests drive as a browser,
// recorded by running them on a development machine (TestFingerprintData
// -update rewrites the file). The caller may change the returned slice.
func DefaultFingerprints() []Fingerprint {
	return append([]Fingerprint(nil), defaultFingerprints...)
}

// ParseFingerprints reads a fingerprint data file strictly: one JSON
// object of the FingerprintData fields, unknown fields refused, at most
// MaxFingerprintDataSize bytes. Every entry must have a client, a kind, a
// valid JA4, a family when it is a browser (none when a tool) and a
// Headers that is empty or 12 lower-case hex digits; a JA4 (or another
// with the same TLSStack) or a header fingerprint listed as both a tool
// and a browser is an error. The error
// wraps ErrInvalidFingerprints and names every bad entry.
func ParseFingerprints(data []byte) ([]Fingerprint, error) {
	if len(data) > MaxFingerprintDataSize {
		return nil, fmt.Errorf("%w: over %d bytes", ErrInvalidFingerprints, MaxFingerprintDataSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc FingerprintData
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFingerprints, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the object", ErrInvalidFingerprints)
	}
	var errs []error
	bad := func(i int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: fingerprints[%d]: %s", ErrInvalidFingerprints, i, fmt.Sprintf(format, args...)))
	}
	kinds := map[string]string{} // JA4 or "h:"+headers → kind
	for i, f := range doc.Fingerprints {
		if f.Client == "" || len(f.Client) > 64 || hdrHasCtl(f.Client) {
			bad(i, "client must be 1 to 64 printable bytes (got %q)", f.Client)
		}
		switch {
		case f.Kind == FingerprintTool && f.Family != "":
			bad(i, "a tool has no family (got %q)", f.Family)
		case f.Kind == FingerprintBrowser:
			switch f.Family {
			case FamilyChromium, FamilyFirefox, FamilyWebKit:
			default:
				bad(i, "family must be %s, %s or %s (got %q)", FamilyChromium, FamilyFirefox, FamilyWebKit, f.Family)
			}
		case f.Kind != FingerprintTool:
			bad(i, "kind must be %s or %s (got %q)", FingerprintTool, FingerprintBrowser, f.Kind)
		}
		if !ValidJA4(f.JA4) {
			bad(i, "ja4 %q is not a JA4 fingerprint", f.JA4)
		} else if k, ok := kinds["s:"+TLSStack(f.JA4)]; ok && k != f.Kind {
			bad(i, "ja4 %s: its TLS stack (%s) is listed as both %s and %s", f.JA4, TLSStack(f.JA4), k, f.Kind)
		} else {
			kinds["s:"+TLSStack(f.JA4)] = f.Kind
		}
		if f.Headers != "" {
			if !validHeaderFingerprint(f.Headers) {
				bad(i, "headers %q is not a header fingerprint (12 lower-case hex digits)", f.Headers)
			} else if k, ok := kinds["h:"+f.Headers]; ok && k != f.Kind {
				bad(i, "headers %s is listed as both %s and %s", f.Headers, k, f.Kind)
			} else {
				kinds["h:"+f.Headers] = f.Kind
			}
		}
		if len(f.Version) > 256 || len(f.Recorded) > 32 {
			bad(i, "version or recorded is too long")
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return doc.Fingerprints, nil
}

// validHeaderFingerprint reports whether s has the form HeaderFingerprint
// returns.
func validHeaderFingerprint(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
