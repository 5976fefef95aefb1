package admission

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	tokenT0  = time.Date(2030, 5, 17, 10, 0, 0, 0, time.UTC)
	tokenB64 = base64.RawURLEncoding
)

// hsKey is a deterministic HS256 key named id.
func hsKey(id string) Key {
	s := sha256.Sum256([]byte("secret of " + id))
	return Key{ID: id, Alg: "HS256", Secret: s[:]}
}

// edKey is a deterministic EdDSA key pair named id.
func edKey(id string) Key {
	seed := sha256.Sum256([]byte("seed of " + id))
	return Key{ID: id, Alg: "EdDSA", Private: ed25519.NewKeyFromSeed(seed[:])}
}

// edPublic is the verification-only half of edKey(id).
func edPublic(id string) Key {
	k := edKey(id)
	return Key{ID: id, Alg: "EdDSA", Public: k.Private.Public().(ed25519.PublicKey)}
}

func mustRing(t testing.TB, signing Key, verify ...Key) *Keyring {
	t.Helper()
	k, err := NewKeyring(signing, verify...)
	if err != nil {
		t.Fatalf("NewKeyring: %v", err)
	}
	return k
}

func sampleTicket() Ticket {
	return Ticket{
		Event:     "tour-2030",
		Visitor:   VisitorID{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10},
		Lane:      PublicLane,
		Tranche:   3,
		Number:    4711,
		Binding:   "dev-9f86d081884c7d65",
		IssuedAt:  tokenT0,
		ExpiresAt: tokenT0.Add(6 * time.Hour),
	}
}

func samplePass() Pass {
	return Pass{
		ID:        "q1w2e3r4t5y6u7i8o9p0aZ",
		Event:     "tour-2030",
		Visitor:   VisitorID{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99},
		Lane:      "presale",
		Number:    12,
		Binding:   "dev-9f86d081884c7d65",
		IssuedAt:  tokenT0,
		ExpiresAt: tokenT0.Add(10 * time.Minute),
	}
}

// tokenKind runs the same cases against tickets and passes.
type tokenKind struct {
	name   string
	typ    string
	other  string // the other kind's typ
	sign   func(k *Keyring) (string, error)
	verify func(k *Keyring, token, event, binding string, now time.Time) error
	// signAt signs the sample with the given validity.
	signAt func(k *Keyring, iat, exp time.Time) (string, error)
	// signOther signs the other kind's sample (for typ confusion).
	signOther func(k *Keyring) (string, error)
}

var tokenKinds = []tokenKind{
	{
		name: "ticket", typ: "wr_ticket", other: "wr_pass",
		sign: func(k *Keyring) (string, error) { return k.SignTicket(sampleTicket()) },
		verify: func(k *Keyring, token, event, binding string, now time.Time) error {
			_, err := k.VerifyTicket(token, event, binding, now)
			return err
		},
		signAt: func(k *Keyring, iat, exp time.Time) (string, error) {
			t := sampleTicket()
			t.IssuedAt, t.ExpiresAt = iat, exp
			return k.SignTicket(t)
		},
		signOther: func(k *Keyring) (string, error) { return k.SignPass(samplePass()) },
	},
	{
		name: "pass", typ: "wr_pass", other: "wr_ticket",
		sign: func(k *Keyring) (string, error) { return k.SignPass(samplePass()) },
		verify: func(k *Keyring, token, event, binding string, now time.Time) error {
			_, err := k.VerifyPass(token, event, binding, now)
			return err
		},
		signAt: func(k *Keyring, iat, exp time.Time) (string, error) {
			p := samplePass()
			p.IssuedAt, p.ExpiresAt = iat, exp
			return k.SignPass(p)
		},
		signOther: func(k *Keyring) (string, error) { return k.SignTicket(sampleTicket()) },
	},
}

var algKeys = []struct {
	name string
	key  func(id string) Key
}{
	{"HS256", hsKey},
	{"EdDSA", edKey},
}

// mustSign(t)(k.SignPass(p)) is the token, or fails the test.
func mustSign(t testing.TB) func(string, error) string {
	return func(tok string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		return tok
	}
}

func TestTokenRoundTrip(t *testing.T) {
	for _, a := range algKeys {
		t.Run(a.name, func(t *testing.T) {
			ring := mustRing(t, a.key("k1"))
			now := tokenT0.Add(time.Minute)

			wantT := sampleTicket()
			tok := mustSign(t)(ring.SignTicket(wantT))
			gotT, err := ring.VerifyTicket(tok, wantT.Event, wantT.Binding, now)
			if err != nil {
				t.Fatalf("VerifyTicket: %v", err)
			}
			if gotT != wantT {
				t.Errorf("ticket round trip:\n got %+v\nwant %+v", gotT, wantT)
			}

			wantP := samplePass()
			tok = mustSign(t)(ring.SignPass(wantP))
			gotP, err := ring.VerifyPass(tok, wantP.Event, wantP.Binding, now)
			if err != nil {
				t.Fatalf("VerifyPass: %v", err)
			}
			if gotP != wantP {
				t.Errorf("pass round trip:\n got %+v\nwant %+v", gotP, wantP)
			}
		})
	}
}

func TestTokenRejected(t *testing.T) {
	const event, binding = "tour-2030", "dev-9f86d081884c7d65"
	now := tokenT0.Add(time.Minute)

	for _, a := range algKeys {
		for _, kind := range tokenKinds {
			t.Run(a.name+"/"+kind.name, func(t *testing.T) {
				key := a.key("k1")
				ring := mustRing(t, key, hsKey("hs-other"), edPublic("ed-other"))
				valid := mustSign(t)(kind.sign(ring))
				hdr, payload, sig := splitToken(t, valid)

				impostor := mustRing(t, a.key("impostor"))
				impostorKey := a.key("impostor")
				impostorKey.ID = "k1" // same kid, another secret
				forger := mustRing(t, impostorKey)

				edPub := []byte(edKey("k1").Private.Public().(ed25519.PublicKey))

				cases := []struct {
					name    string
					token   string
					event   string
					binding string
					now     time.Time
					want    error
					reason  error // the exact wrapped reason, when it matters
				}{
					{name: "valid", token: valid},
					{name: "forged signature", token: mustSign(t)(kind.sign(forger)), want: ErrBadToken},
					{name: "flipped signature bit", token: hdr + "." + payload + "." + flipBit(t, sig), want: ErrBadToken},
					{name: "signature of another token", token: hdr + "." + payload + "." + sigOf(t, mustSign(t)(kind.signAt(ring, tokenT0, tokenT0.Add(time.Hour)))), want: ErrBadToken},
					{name: "empty signature", token: hdr + "." + payload + ".", want: ErrBadToken},
					{name: "expired exactly", token: valid, now: expiryOf(t, valid), want: ErrExpiredToken},
					{name: "expired long ago", token: valid, now: expiryOf(t, valid).Add(24 * time.Hour), want: ErrExpiredToken},
					{name: "last valid second", token: valid, now: expiryOf(t, valid).Add(-time.Nanosecond)},
					{name: "issued far in the future", token: mustSign(t)(kind.signAt(ring, now.Add(time.Hour), now.Add(2*time.Hour))), want: ErrBadToken, reason: errIssuedFuture},
					{name: "issued 6 s in the future", token: mustSign(t)(kind.signAt(ring, now.Add(6*time.Second), now.Add(time.Hour))), want: ErrBadToken, reason: errIssuedFuture},
					{name: "issued 5 s in the future (skew)", token: mustSign(t)(kind.signAt(ring, now.Add(5*time.Second), now.Add(time.Hour)))},
					{name: "wrong event", token: valid, event: "other-event", want: ErrWrongEvent},
					{name: "event prefix", token: valid, event: "tour-203", want: ErrWrongEvent},
					{name: "wrong binding", token: valid, binding: "dev-0000000000000000", want: ErrWrongBinding},
					{name: "binding prefix", token: valid, binding: binding[:len(binding)-1], want: ErrWrongBinding},
					{name: "no binding", token: valid, binding: "-", want: ErrWrongBinding},
					{name: "other type", token: mustSign(t)(kind.signOther(ring)), want: ErrBadToken, reason: errWrongType},
					{name: "alg none", token: craftToken(t, map[string]any{"alg": "none", "kid": "k1", "typ": "JWT"}, payload, nil), want: ErrBadToken},
					{name: "alg none with signature", token: craftToken(t, map[string]any{"alg": "none", "kid": "k1", "typ": "JWT"}, payload, []byte("sig")), want: ErrBadToken},
					{name: "alg None", token: craftToken(t, map[string]any{"alg": "None", "kid": "k1"}, payload, nil), want: ErrBadToken},
					{name: "HS256 with EdDSA public key as secret", token: craftHMAC(t, map[string]any{"alg": "HS256", "kid": "ed-other", "typ": "JWT"}, payload, []byte(edKey("ed-other").Private.Public().(ed25519.PublicKey))), want: ErrBadToken},
					{name: "HS256 with own EdDSA public key as secret", token: craftHMAC(t, map[string]any{"alg": "HS256", "kid": "k1", "typ": "JWT"}, payload, edPub), want: ErrBadToken},
					{name: "HS256 secret under EdDSA kid", token: craftHMAC(t, map[string]any{"alg": "HS256", "kid": "ed-other"}, payload, hsKey("hs-other").Secret), want: ErrBadToken},
					{name: "EdDSA signature under HS256 kid", token: craftEd(t, map[string]any{"alg": "EdDSA", "kid": "hs-other"}, payload, edKey("hs-other").Private), want: ErrBadToken},
					{name: "HS512 under HS256 kid", token: craftHMAC512(t, map[string]any{"alg": "HS512", "kid": "hs-other"}, payload, hsKey("hs-other").Secret), want: ErrBadToken},
					{name: "RS256 header", token: craftToken(t, map[string]any{"alg": "RS256", "kid": "k1"}, payload, []byte("sig")), want: ErrBadToken},
					{name: "unknown kid", token: mustSign(t)(kind.sign(impostor)), want: ErrBadToken, reason: errUnknownKid},
					{name: "unknown kid, right secret", token: resign(t, key, map[string]any{"alg": key.Alg, "kid": "k2"}, payload), want: ErrBadToken, reason: errUnknownKid},
					{name: "missing kid", token: resign(t, key, map[string]any{"alg": key.Alg, "typ": "JWT"}, payload), want: ErrBadToken, reason: errNoKid},
					{name: "empty kid", token: resign(t, key, map[string]any{"alg": key.Alg, "kid": ""}, payload), want: ErrBadToken, reason: errNoKid},
					{name: "numeric kid", token: resign(t, key, map[string]any{"alg": key.Alg, "kid": 1}, payload), want: ErrBadToken},
					{name: "kid in other case", token: resign(t, key, map[string]any{"alg": key.Alg, "KID": "k1"}, payload), want: ErrBadToken},
					{name: "header reordered, still valid", token: resign(t, key, map[string]any{"kid": "k1", "alg": key.Alg}, payload)},
					{name: "too long", token: valid + strings.Repeat("A", maxTokenLen), want: ErrBadToken, reason: errTooLong},
					{name: "just too long", token: hdr + "." + payload + "." + sig + strings.Repeat("A", maxTokenLen+1-len(valid)), want: ErrBadToken, reason: errTooLong},
					{name: "padded base64", token: hdr + "." + payload + "." + sig + "==", want: ErrBadToken},
					{name: "non-canonical signature encoding", token: hdr + "." + payload + "." + nonCanonical(sig), want: ErrBadToken},
					{name: "non-canonical payload encoding", token: hdr + "." + nonCanonicalIfPossible(payload) + "." + sig, want: ErrBadToken},
					{name: "empty", token: "", want: ErrBadToken},
					{name: "garbage", token: "garbage", want: ErrBadToken},
					{name: "dots", token: "..", want: ErrBadToken},
					{name: "four segments", token: valid + ".x", want: ErrBadToken},
					{name: "header not base64", token: "!!!." + payload + "." + sig, want: ErrBadToken},
					{name: "header not JSON", token: tokenB64.EncodeToString([]byte("nope")) + "." + payload + "." + sig, want: ErrBadToken},
					{name: "payload not JSON", token: resignRaw(t, key, map[string]any{"alg": key.Alg, "kid": "k1"}, []byte("nope")), want: ErrBadToken},
					{name: "payload array", token: resignRaw(t, key, map[string]any{"alg": key.Alg, "kid": "k1"}, []byte("[]")), want: ErrBadToken},
					{name: "payload empty object", token: resignRaw(t, key, map[string]any{"alg": key.Alg, "kid": "k1"}, []byte("{}")), want: ErrBadToken},
				}
				// Every claim modified, the signature kept.
				var claims map[string]any
				if err := json.Unmarshal(decodeSeg(t, payload), &claims); err != nil {
					t.Fatal(err)
				}
				for name, v := range claims {
					mod := cloneClaims(claims)
					switch v := v.(type) {
					case string:
						if name == "vid" {
							mod[name] = strings.Repeat("0", 32)
						} else {
							mod[name] = v + "x"
						}
					case float64:
						mod[name] = v + 1
					default:
						t.Fatalf("claim %s has type %T", name, v)
					}
					cases = append(cases, struct {
						name    string
						token   string
						event   string
						binding string
						now     time.Time
						want    error
						reason  error
					}{name: "modified " + name, token: hdr + "." + encodeJSON(t, mod) + "." + sig, want: ErrBadToken})
				}

				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						ev, bind, at := event, binding, now
						if c.event != "" {
							ev = c.event
						}
						if c.binding == "-" {
							bind = ""
						} else if c.binding != "" {
							bind = c.binding
						}
						if !c.now.IsZero() {
							at = c.now
						}
						err := kind.verify(ring, c.token, ev, bind, at)
						if c.want == nil {
							if err != nil {
								t.Fatalf("verify: %v, want success", err)
							}
							return
						}
						if !errors.Is(err, c.want) {
							t.Fatalf("verify: %v, want %v", err, c.want)
						}
						if c.reason != nil && !errors.Is(err, c.reason) {
							t.Errorf("verify: %v, want reason %v", err, c.reason)
						}
						if !strings.HasPrefix(err.Error(), "admission: ") {
							t.Errorf("error %q lacks the package prefix", err)
						}
					})
				}
			})
		}
	}
}

func TestTokenSignRefusesWhatWouldNotVerify(t *testing.T) {
	ring := mustRing(t, hsKey("k1"))
	ticketCases := []struct {
		name string
		mod  func(*Ticket)
	}{
		{"empty event", func(t *Ticket) { t.Event = "" }},
		{"event not UTF-8", func(t *Ticket) { t.Event = "ev\xff" }},
		{"empty lane", func(t *Ticket) { t.Lane = "" }},
		{"long lane", func(t *Ticket) { t.Lane = strings.Repeat("l", 65) }},
		{"lane not UTF-8", func(t *Ticket) { t.Lane = "\xc3" }},
		{"binding not UTF-8", func(t *Ticket) { t.Binding = "\xff" }},
		{"negative tranche", func(t *Ticket) { t.Tranche = -1 }},
		{"no issued at", func(t *Ticket) { t.IssuedAt = time.Time{} }},
		{"no expiry", func(t *Ticket) { t.ExpiresAt = time.Time{} }},
		{"expiry before issue", func(t *Ticket) { t.ExpiresAt = t.IssuedAt.Add(-time.Second) }},
		{"expiry in the same second", func(t *Ticket) { t.ExpiresAt = t.IssuedAt.Add(500 * time.Millisecond) }},
		{"too long", func(t *Ticket) { t.Binding = strings.Repeat("b", maxTokenLen) }},
	}
	for _, c := range ticketCases {
		t.Run("ticket/"+c.name, func(t *testing.T) {
			tk := sampleTicket()
			c.mod(&tk)
			if tok, err := ring.SignTicket(tk); !errors.Is(err, ErrBadToken) {
				t.Errorf("SignTicket = %q, %v; want ErrBadToken", tok, err)
			}
		})
	}
	for _, id := range []string{"", "a/b", "a=b", strings.Repeat("p", 65), "é"} {
		t.Run("pass/id "+id, func(t *testing.T) {
			p := samplePass()
			p.ID = id
			if tok, err := ring.SignPass(p); !errors.Is(err, ErrBadToken) {
				t.Errorf("SignPass = %q, %v; want ErrBadToken", tok, err)
			}
		})
	}
	t.Run("pass/long binding", func(t *testing.T) {
		p := samplePass()
		p.Binding = strings.Repeat("b", maxTokenLen)
		if _, err := ring.SignPass(p); !errors.Is(err, ErrBadToken) {
			t.Errorf("SignPass = %v, want ErrBadToken", err)
		}
	})
	// Sub-second times are truncated, not refused.
	t.Run("sub-second times", func(t *testing.T) {
		p := samplePass()
		p.IssuedAt = p.IssuedAt.Add(300 * time.Millisecond)
		p.ExpiresAt = p.ExpiresAt.Add(900 * time.Millisecond)
		tok := mustSign(t)(ring.SignPass(p))
		got, err := ring.VerifyPass(tok, p.Event, p.Binding, tokenT0)
		if err != nil {
			t.Fatal(err)
		}
		if !got.IssuedAt.Equal(tokenT0) || !got.ExpiresAt.Equal(samplePass().ExpiresAt) {
			t.Errorf("times = %v, %v; want truncated to the second", got.IssuedAt, got.ExpiresAt)
		}
	})
}

func TestNewPassID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewPassID()
		raw, err := tokenB64.DecodeString(id)
		if err != nil || len(raw) != 16 || len(id) != 22 {
			t.Fatalf("NewPassID = %q (%v), want 22 base64url characters of 16 bytes", id, err)
		}
		if seen[id] {
			t.Fatalf("NewPassID repeated %q", id)
		}
		seen[id] = true
	}
}

// Verifying is on the hot path: a bound on allocations catches a
// regression, and rejecting garbage allocates nothing.
func TestVerifyPassAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	ring := mustRing(t, hsKey("k1"))
	p := samplePass()
	tok := mustSign(t)(ring.SignPass(p))
	n := testing.AllocsPerRun(200, func() {
		if _, err := ring.VerifyPass(tok, p.Event, p.Binding, tokenT0); err != nil {
			t.Fatal(err)
		}
	})
	if n > maxVerifyAllocs {
		t.Errorf("VerifyPass allocates %.0f times, want at most %d", n, maxVerifyAllocs)
	}
	for _, bad := range []string{strings.Repeat("x", maxTokenLen+1), "garbage"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = ring.VerifyPass(bad, p.Event, p.Binding, tokenT0) }); n != 0 {
			t.Errorf("rejecting %.10q allocates %.0f times, want 0", bad, n)
		}
	}
}

// maxVerifyAllocs bounds VerifyPass's allocations (most are jwt.Parser's:
// the header map, the decoded segments, the JSON decoding).
const maxVerifyAllocs = 42

// ---- helpers for hand-made tokens ----

// ---- fuzzing ----

const (
	fuzzEvent   = "tour-2030"
	fuzzBinding = "dev-9f86d081884c7d65"
)

// TestTicketPromise: the latest time promised at the join rides in the
// ticket's "eh" claim, to the second; a ticket without one has no claim
// and verifies with a zero PromisedBy; the claim in a pass, or as 0, is
// refused.
func TestTicketPromise(t *testing.T) {
	ring := mustRing(t, edKey("k1"))
	now := tokenT0.Add(time.Minute)
	want := sampleTicket()
	want.PromisedBy = tokenT0.Add(17 * time.Minute)
	tok := mustSign(t)(ring.SignTicket(want))
	if _, payload := decodeToken(t, tok); payload["eh"] != float64(want.PromisedBy.Unix()) {
		t.Fatalf("eh claim = %v, want %d", payload["eh"], want.PromisedBy.Unix())
	}
	got, err := ring.VerifyTicket(tok, want.Event, want.Binding, now)
	if err != nil || got != want {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, want)
	}
	plain := mustSign(t)(ring.SignTicket(sampleTicket()))
	if _, payload := decodeToken(t, plain); payload["eh"] != nil {
		t.Fatalf("a ticket without a promise has eh = %v", payload["eh"])
	}
	for name, claims := range map[string]map[string]any{
		"eh in a pass": {"eh": 5, "typ": "pass"},
		"eh of 0":      {"eh": 0},
		"eh negative":  {"eh": -1},
	} {
		_, payload := decodeToken(t, tok)
		for k, v := range claims {
			payload[k] = v
		}
		if claims["typ"] == "pass" {
			_, pp := decodeToken(t, mustSign(t)(ring.SignPass(samplePass())))
			pp["eh"] = 5
			payload = pp
		}
		hdr, _, _ := splitToken(t, tok)
		signed, err := ring.signer.method.Sign(hdr+"."+encodeJSON(t, payload), ring.signer.signKey)
		if err != nil {
			t.Fatal(err)
		}
		forged := hdr + "." + encodeJSON(t, payload) + "." + tokenB64.EncodeToString(signed)
		var verr error
		if claims["typ"] == "pass" {
			_, verr = ring.VerifyPass(forged, want.Event, want.Binding, now)
		} else {
			_, verr = ring.VerifyTicket(forged, want.Event, want.Binding, now)
		}
		if !errors.Is(verr, ErrBadToken) {
			t.Errorf("%s: %v, want ErrBadToken", name, verr)
		}
	}
}
