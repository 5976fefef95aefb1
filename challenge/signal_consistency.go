package challenge

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
)

// Reasons of ConsistencySignal, stable for metrics. Each is a User-Agent
// that claims a browser (Chrome and the other Chromium browsers, Firefox,
// Safari) contradicted by how the client speaks.
const (
	// The JA4 is a known tool's (curl, Python, Go, Node, Java…).
	ReasonTLSTool = "claims_browser_tool_tls"
	// The JA4 is a known browser's, of another family than claimed.
	ReasonTLSOtherBrowser = "claims_browser_other_browser_tls"
	// The JA4 is not TLS 1.3 offering HTTP/2 (or HTTP/3), which every
	// browser the claimed version belongs to offers.
	ReasonTLSNotBrowser = "claims_browser_non_browser_tls"
	// The JA4's cipher list is none of the claimed family's known ones.
	ReasonTLSOtherStack = "claims_browser_other_tls_stack"
	// The header fingerprint is a known tool's default request.
	ReasonHeadersTool = "claims_browser_tool_headers"
)

// Suspicion of each ConsistencySignal finding. A tool's own fingerprint
// under a browser's name is a lie; another browser's nearly so (a user
// agent switcher extension is the honest exception). A TLS shape no
// current browser has, or a cipher list not the claimed browser's, is
// what a TLS-intercepting middlebox (a corporate proxy, antivirus HTTPS
// scanning) also produces, so it is held lower.
const (
	suspTLSTool         = 1.0
	suspTLSOtherBrowser = 0.9
	suspTLSNotBrowser   = 0.8
	suspTLSOtherStack   = 0.7
	suspHeadersTool     = 0.8
)

// The first versions whose TLS is 1.3 with ALPN h2 by default.
const (
	chromeTLS13Since  = 70
	firefoxTLS13Since = 63
	safariTLS13Since  = 13 // the Version/ token
)

// ConsistencyOptions configures a ConsistencySignal.
type ConsistencyOptions struct {
	// Data are the known clients (DefaultFingerprints and an operator's
	// file): tools' JA4 and header fingerprints, browsers' JA4 with their
	// family.
	Data []Fingerprint
}

// ConsistencySignal judges whether a request that claims a browser in its
// User-Agent speaks like that browser, from Request.JA4 and the
// HeaderFingerprint of Request.Headers against fingerprint data:
//
//   - a JA4 the data lists as a tool's: suspicion 1;
//   - a JA4 the data lists as a browser of another family: 0.9;
//   - (a JA4 the data does not list counts as the listed one with its
//     TLSStack, if any: the client resuming a session on a new
//     connection;)
//   - not TLS 1.3, or an ALPN that does not start with h2 (h3 over QUIC),
//     from a browser version that always offers both: 0.8;
//   - a cipher list (JA4 part b) that none of the claimed family's known
//     JA4s has, when the data knows that family: 0.7 (browsers change
//     their extensions between versions, hardly ever their ciphers);
//   - a header fingerprint the data lists as a tool's default request:
//     0.8.
//
// The strongest finding counts. A request whose User-Agent claims no
// browser (a tool's, or none: HeaderSignal's business) is not judged, nor
// is the JA4 of a request without one. It is immutable and safe for
// concurrent use; Check allocates nothing.
type ConsistencySignal struct {
	ja4     map[string]Fingerprint // JA4 → its first entry
	stacks  map[string]Fingerprint // TLSStack → its first entry
	headers map[[6]byte]bool       // tools' header fingerprints
	ciphers [famWebKit + 1]map[string]bool
}

// ErrInvalidConsistency is returned (wrapped) by NewConsistencySignal.
var ErrInvalidConsistency = errors.New("challenge: invalid consistency signal options")

// NewConsistencySignal returns a ConsistencySignal for o; data entries
// that are not valid (see ParseFingerprints) are an error.
func NewConsistencySignal(o ConsistencyOptions) (*ConsistencySignal, error) {
	s := &ConsistencySignal{ja4: map[string]Fingerprint{}, stacks: map[string]Fingerprint{}, headers: map[[6]byte]bool{}}
	var errs []error
	for i, f := range o.Data {
		fam := familyOf(f.Family)
		switch {
		case !ValidJA4(f.JA4):
			errs = append(errs, fmt.Errorf("%w: data[%d] (%s): %q is not a JA4 fingerprint", ErrInvalidConsistency, i, f.Client, f.JA4))
			continue
		case f.Kind == FingerprintBrowser && fam == famOther:
			errs = append(errs, fmt.Errorf("%w: data[%d] (%s): unknown family %q", ErrInvalidConsistency, i, f.Client, f.Family))
			continue
		case f.Kind != FingerprintBrowser && f.Kind != FingerprintTool:
			errs = append(errs, fmt.Errorf("%w: data[%d] (%s): unknown kind %q", ErrInvalidConsistency, i, f.Client, f.Kind))
			continue
		}
		if prev, ok := s.ja4[f.JA4]; ok && prev.Kind != f.Kind {
			errs = append(errs, fmt.Errorf("%w: data[%d] (%s): %s is listed as both %s and %s", ErrInvalidConsistency, i, f.Client, f.JA4, prev.Kind, f.Kind))
			continue
		} else if !ok {
			s.ja4[f.JA4] = f
		}
		stack := TLSStack(f.JA4)
		if prev, ok := s.stacks[stack]; ok && prev.Kind != f.Kind {
			errs = append(errs, fmt.Errorf("%w: data[%d] (%s): the TLS stack %s is listed as both %s (%s) and %s", ErrInvalidConsistency, i, f.Client, stack, prev.Kind, prev.Client, f.Kind))
			continue
		} else if !ok {
			s.stacks[stack] = f
		}
		if f.Kind == FingerprintTool && f.Headers != "" {
			var sum [6]byte
			if n, err := hex.Decode(sum[:], []byte(f.Headers)); err != nil || n != len(sum) || !validHeaderFingerprint(f.Headers) {
				errs = append(errs, fmt.Errorf("%w: data[%d] (%s): headers %q is not a header fingerprint", ErrInvalidConsistency, i, f.Client, f.Headers))
				continue
			}
			s.headers[sum] = true
		}
		if f.Kind == FingerprintBrowser {
			if s.ciphers[fam] == nil {
				s.ciphers[fam] = map[string]bool{}
			}
			s.ciphers[fam][f.JA4[11:23]] = true
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func familyOf(name string) uaFamily {
	switch name {
	case FamilyChromium:
		return famChromium
	case FamilyFirefox:
		return famFirefox
	case FamilyWebKit:
		return famWebKit
	}
	return famOther
}

// Check implements Signal.
func (s *ConsistencySignal) Check(_ context.Context, r *Request) (Finding, error) {
	ua, ok := r.Get("user-agent")
	if !ok {
		return Finding{}, nil
	}
	fam, major := uaClassify(ua)
	if fam == famOther {
		return Finding{}, nil
	}
	var f Finding
	raise := func(reason string, sus float64) {
		if sus > f.Suspicion {
			f = Finding{Suspicion: sus, Reason: reason}
		}
	}
	if j := r.JA4; j != "" && ValidJA4(j) {
		known, listed := s.ja4[j]
		if !listed {
			// The same client on another connection: a resumed session
			// adds extensions, the stack stays.
			var buf [ja4StackLen]byte
			known, listed = s.stacks[string(appendTLSStack(buf[:0], j))]
		}
		switch {
		case listed && known.Kind == FingerprintTool:
			raise(ReasonTLSTool, suspTLSTool)
		case listed && familyOf(known.Family) != fam:
			raise(ReasonTLSOtherBrowser, suspTLSOtherBrowser)
		case listed:
			// The claimed browser's own.
		default:
			if tls13Since(fam, major) && (j[1:3] != "13" || !(j[8:10] == "h2" || j[8:10] == "h3")) {
				raise(ReasonTLSNotBrowser, suspTLSNotBrowser)
			}
			if c := s.ciphers[fam]; c != nil && !c[j[11:23]] {
				raise(ReasonTLSOtherStack, suspTLSOtherStack)
			}
		}
	}
	if len(s.headers) > 0 && s.headers[headerFingerprintSum(r.Headers)] {
		raise(ReasonHeadersTool, suspHeadersTool)
	}
	return f, nil
}

// tls13Since reports whether version major of family always offers TLS
// 1.3 with ALPN h2.
func tls13Since(fam uaFamily, major int) bool {
	switch fam {
	case famChromium:
		return major >= chromeTLS13Since
	case famFirefox:
		return major >= firefoxTLS13Since
	case famWebKit:
		return major >= safariTLS13Since
	}
	return false
}

var _ Signal = (*ConsistencySignal)(nil)
