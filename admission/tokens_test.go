package admission

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
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

// The claims' JSON names and the kid header are a contract with origins
// that verify passes themselves.
func TestTokenClaimNames(t *testing.T) {
	ring := mustRing(t, hsKey("k1"))
	for _, kind := range tokenKinds {
		t.Run(kind.name, func(t *testing.T) {
			tok := mustSign(t)(kind.sign(ring))
			header, payload := decodeToken(t, tok)
			if header["kid"] != "k1" || header["alg"] != "HS256" {
				t.Errorf("header = %v, want kid k1 and alg HS256", header)
			}
			want := []string{"typ", "ev", "vid", "lane", "num", "bind", "iat", "exp"}
			if kind.typ == "wr_ticket" {
				want = append(want, "tr")
			} else {
				want = append(want, "jti")
			}
			if len(payload) != len(want) {
				t.Errorf("payload has %d claims, want %d: %v", len(payload), len(want), payload)
			}
			for _, name := range want {
				if _, ok := payload[name]; !ok {
					t.Errorf("claim %q missing from %v", name, payload)
				}
			}
			if payload["typ"] != kind.typ {
				t.Errorf("typ = %v, want %s", payload["typ"], kind.typ)
			}
			if vid, _ := payload["vid"].(string); len(vid) != 32 || strings.ToLower(vid) != vid {
				t.Errorf("vid = %q, want 32 lower-case hex digits", vid)
			}
			if payload["iat"] != float64(tokenT0.Unix()) {
				t.Errorf("iat = %v, want %d", payload["iat"], tokenT0.Unix())
			}
		})
	}
}

func TestKeyringRotation(t *testing.T) {
	for _, a := range algKeys {
		t.Run(a.name, func(t *testing.T) {
			old, next := a.key("2030-01"), a.key("2030-02")
			oldVerify := old
			if a.name == "EdDSA" {
				oldVerify = edPublic(old.ID) // a verification-only key
			}
			before := mustRing(t, old)
			during := mustRing(t, next, oldVerify)
			after := mustRing(t, next)
			now := tokenT0.Add(time.Minute)

			for _, kind := range tokenKinds {
				oldTok := mustSign(t)(kind.sign(before))
				newTok := mustSign(t)(kind.sign(during))
				if h, _ := decodeToken(t, newTok); h["kid"] != next.ID {
					t.Errorf("%s: rotated ring signs with kid %v, want %s", kind.name, h["kid"], next.ID)
				}
				for _, c := range []struct {
					ring  *Keyring
					token string
					want  error
				}{
					{before, oldTok, nil},
					{during, oldTok, nil},
					{during, newTok, nil},
					{after, newTok, nil},
					{after, oldTok, ErrBadToken},
					{before, newTok, ErrBadToken},
				} {
					err := kind.verify(c.ring, c.token, "tour-2030", "dev-9f86d081884c7d65", now)
					if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
						t.Errorf("%s: verify = %v, want %v", kind.name, err, c.want)
					}
				}
			}
		})
	}
}

func TestKeyringVerifyOnlyKeyCannotSign(t *testing.T) {
	if _, err := NewKeyring(edPublic("pub")); err == nil {
		t.Fatal("NewKeyring accepted a verification-only signing key")
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

// Claims of the wrong shape are refused even when properly signed.
func TestTokenClaimShapes(t *testing.T) {
	key := hsKey("k1")
	ring := mustRing(t, key)
	now := tokenT0.Add(time.Minute)
	hdr := map[string]any{"alg": "HS256", "kid": "k1", "typ": "JWT"}
	ticket := func(mod func(m map[string]any)) []byte {
		m := map[string]any{
			"typ": "wr_ticket", "ev": "ev", "vid": strings.Repeat("ab", 16), "lane": "public",
			"tr": 0, "num": 0, "bind": "b", "iat": tokenT0.Unix(), "exp": tokenT0.Add(time.Hour).Unix(),
		}
		mod(m)
		b, _ := json.Marshal(m)
		return b
	}
	pass := func(mod func(m map[string]any)) []byte {
		m := map[string]any{
			"typ": "wr_pass", "jti": "abc_-DEF", "ev": "ev", "vid": strings.Repeat("ab", 16), "lane": "public",
			"num": 1, "bind": "b", "iat": tokenT0.Unix(), "exp": tokenT0.Add(time.Hour).Unix(),
		}
		mod(m)
		b, _ := json.Marshal(m)
		return b
	}
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	ok := func(map[string]any) {}

	cases := []struct {
		name   string
		mod    func(map[string]any)
		ticket bool // the ticket variant is rejected
		pass   bool // the pass variant is rejected
	}{
		{"well formed", ok, false, false},
		{"vid upper case", set("vid", strings.Repeat("AB", 16)), true, true},
		{"vid short", set("vid", strings.Repeat("a", 31)), true, true},
		{"vid long", set("vid", strings.Repeat("a", 33)), true, true},
		{"vid not hex", set("vid", strings.Repeat("g", 32)), true, true},
		{"vid number", set("vid", 12), true, true},
		{"vid missing", del("vid"), true, true},
		{"num negative", set("num", -1), true, true},
		{"num fraction", set("num", 1.5), true, true},
		{"num string", set("num", "1"), true, true},
		{"num max", set("num", uint64(1<<64-1)), false, false},
		{"tr negative", set("tr", -1), true, true},
		{"tr fraction", set("tr", 0.5), true, true},
		{"tr in a pass", set("tr", 1), false, true},
		{"tr too big", set("tr", uint64(1<<63)), true, true},
		{"tr missing", del("tr"), true, false},
		{"lane empty", set("lane", ""), true, true},
		{"lane 64 bytes", set("lane", strings.Repeat("l", 64)), false, false},
		{"lane 65 bytes", set("lane", strings.Repeat("l", 65)), true, true},
		{"lane missing", del("lane"), true, true},
		{"ev empty", set("ev", ""), true, true},
		{"typ missing", del("typ"), true, true},
		{"typ other", set("typ", "wr_other"), true, true},
		{"iat missing", del("iat"), true, true},
		{"iat zero", set("iat", 0), true, true},
		{"iat fraction", set("iat", float64(tokenT0.Unix())+0.5), true, true},
		{"exp missing", del("exp"), true, true},
		{"exp equals iat", set("exp", tokenT0.Unix()), true, true},
		{"exp before iat", set("exp", tokenT0.Unix()-1), true, true},
		{"exp after year 9999", set("exp", int64(maxUnix+1)), true, true},
		{"jti in a ticket", set("jti", "abc"), true, false},
		{"jti empty", set("jti", ""), true, true},
		{"jti missing", del("jti"), false, true},
		{"jti not base64url", set("jti", "a/b"), true, true},
		{"jti 65 bytes", set("jti", strings.Repeat("j", 65)), true, true},
		{"jti number", set("jti", 5), true, true},
		{"ev number", set("ev", 5), true, true},
		{"ev null", set("ev", nil), true, true},
		{"lane object", set("lane", map[string]any{"a": 1}), true, true},
		{"bind array", set("bind", []any{"b"}), true, true},
		{"bind missing", del("bind"), true, true},
		{"typ number", set("typ", 1), true, true},
		{"num beyond uint64", set("num", json.Number("18446744073709551616")), true, true},
		{"iat negative", set("iat", -5), true, true},
		{"unknown claim", set("extra", 1), false, false},
		{"unknown nested claim", set("extra", map[string]any{"a": []any{1, "}", map[string]any{}}}), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := resignRaw(t, key, hdr, ticket(c.mod))
			_, err := ring.VerifyTicket(tok, "ev", "b", now)
			if c.ticket != (err != nil) || (err != nil && !errors.Is(err, ErrBadToken)) {
				t.Errorf("VerifyTicket = %v, want rejected %v (ErrBadToken)", err, c.ticket)
			}
			tok = resignRaw(t, key, hdr, pass(c.mod))
			_, err = ring.VerifyPass(tok, "ev", "b", now)
			if c.pass != (err != nil) || (err != nil && !errors.Is(err, ErrBadToken)) {
				t.Errorf("VerifyPass = %v, want rejected %v (ErrBadToken)", err, c.pass)
			}
		})
	}
}

// Payloads no signer of this package writes are refused, signed or not.
func TestTokenRawPayloads(t *testing.T) {
	key := hsKey("k1")
	ring := mustRing(t, key)
	hdr := map[string]any{"alg": "HS256", "kid": "k1"}
	const tail = `"vid":"abababababababababababababababab","lane":"public","num":7,"bind":"b","iat":1900000000,"exp":1900003600}`
	now := time.Unix(1900000060, 0)
	ok := `{"typ":"wr_pass","jti":"abc","ev":"ev",` + tail
	if _, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(ok)), "ev", "b", now); err != nil {
		t.Fatalf("the base payload is refused: %v", err)
	}
	for name, payload := range map[string]string{
		"duplicate claim":                      `{"typ":"wr_pass","jti":"abc","ev":"ev","ev":"ev",` + tail,
		"escaped claim name":                   `{"typ":"wr_pass","jti":"abc","\u0065v":"ev",` + tail,
		"escaped duplicate claim":              `{"typ":"wr_pass","jti":"abc","ev":"ev","\u0065v":"other",` + tail,
		"claim name in other case":             `{"typ":"wr_pass","jti":"abc","EV":"ev",` + tail,
		"claim name in other case, duplicated": `{"typ":"wr_pass","jti":"abc","ev":"ev","Ev":"other",` + tail,
		"event not UTF-8":                      "{\"typ\":\"wr_pass\",\"jti\":\"abc\",\"ev\":\"ev\xff\"," + tail,
		"escaped typ":                          `{"typ":"wr_p\u0061ss","jti":"abc","ev":"ev",` + tail,
		"escaped vid":                          `{"typ":"wr_pass","jti":"abc","ev":"ev","vid":"\u0061bababababababababababababababab",` + tail[len(`"vid":"abababababababababababababababab",`):],
		"num exponent":                         `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":7e0`, 1),
		"num leading zero":                     `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":07`, 1),
		"num negative zero":                    `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":-0`, 1),
		"trailing data":                        ok + `{}`,
		"trailing comma":                       strings.TrimSuffix(ok, "}") + `,}`,
		"not an object":                        `["typ","wr_pass"]`,
		"null":                                 `null`,
		"string":                               `"wr_pass"`,
		"empty":                                ``,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(payload)), "ev", "b", now)
			if !errors.Is(err, ErrBadToken) {
				t.Errorf("VerifyPass(%s) = %v, want ErrBadToken", payload, err)
			}
		})
	}
	// Escapes in values are decoded.
	escaped := `{"typ":"wr_pass","jti":"abc","ev":"e\u0076\n\"",` + strings.Replace(tail, `"b"`, `"\u00e9\ud83d\ude00"`, 1)
	p, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(escaped)), "ev\n\"", "é😀", now)
	if err != nil || p.Event != "ev\n\"" || p.Binding != "é😀" {
		t.Errorf("escaped values: %+v, %v", p, err)
	}
	// White space anywhere JSON allows it.
	spaced := " {\n\t\"typ\" : \"wr_pass\" ,\r\n \"jti\":\"abc\", \"ev\":\"ev\", \"extra\" : [ 1 , {\"}\":\"]\"} ] ," + tail + " \n"
	if _, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(spaced)), "ev", "b", now); err != nil {
		t.Errorf("white space: %v", err)
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

func TestNewKeyringValidation(t *testing.T) {
	ed := edKey("ed")
	otherPub := edPublic("other").Public
	corrupt := ed25519.PrivateKey(append([]byte(nil), ed.Private...))
	corrupt[40] ^= 1 // the embedded public key no longer matches the seed
	cases := []struct {
		name    string
		signing Key
		verify  []Key
		ok      bool
	}{
		{"hs256", hsKey("a"), nil, true},
		{"eddsa", ed, nil, true},
		{"eddsa with matching public", Key{ID: "e", Alg: "EdDSA", Private: ed.Private, Public: ed.Private.Public().(ed25519.PublicKey)}, nil, true},
		{"both kinds", hsKey("a"), []Key{edKey("b"), edPublic("c")}, true},
		{"empty id", Key{Alg: "HS256", Secret: hsKey("a").Secret}, nil, false},
		{"long id", Key{ID: strings.Repeat("k", 65), Alg: "HS256", Secret: hsKey("a").Secret}, nil, false},
		{"id not UTF-8", Key{ID: "\xff", Alg: "HS256", Secret: hsKey("a").Secret}, nil, false},
		{"no alg", Key{ID: "a", Secret: hsKey("a").Secret}, nil, false},
		{"alg none", Key{ID: "a", Alg: "none", Secret: hsKey("a").Secret}, nil, false},
		{"alg RS256", Key{ID: "a", Alg: "RS256", Secret: hsKey("a").Secret}, nil, false},
		{"alg lower case", Key{ID: "a", Alg: "hs256", Secret: hsKey("a").Secret}, nil, false},
		{"short secret", Key{ID: "a", Alg: "HS256", Secret: make([]byte, 31)}, nil, false},
		{"no secret", Key{ID: "a", Alg: "HS256"}, nil, false},
		{"hs256 with ed25519 key", Key{ID: "a", Alg: "HS256", Secret: hsKey("a").Secret, Private: ed.Private}, nil, false},
		{"eddsa with secret", Key{ID: "a", Alg: "EdDSA", Secret: hsKey("a").Secret, Private: ed.Private}, nil, false},
		{"eddsa without keys", Key{ID: "a", Alg: "EdDSA"}, nil, false},
		{"eddsa short private", Key{ID: "a", Alg: "EdDSA", Private: ed.Private[:32]}, nil, false},
		{"eddsa short public", hsKey("a"), []Key{{ID: "p", Alg: "EdDSA", Public: otherPub[:31]}}, false},
		{"eddsa mismatched public", Key{ID: "a", Alg: "EdDSA", Private: ed.Private, Public: otherPub}, nil, false},
		{"eddsa corrupt private", Key{ID: "a", Alg: "EdDSA", Private: corrupt}, nil, false},
		{"signing key verification only", edPublic("a"), nil, false},
		{"duplicate kid", hsKey("a"), []Key{edKey("a")}, false},
		{"duplicate verify kid", hsKey("a"), []Key{edKey("b"), hsKey("b")}, false},
		{"bad verify key", hsKey("a"), []Key{{ID: "b", Alg: "HS256"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := NewKeyring(c.signing, c.verify...)
			if c.ok != (err == nil) {
				t.Fatalf("NewKeyring = %v, want ok %v", err, c.ok)
			}
			if err != nil {
				if k != nil {
					t.Error("NewKeyring returned a keyring with an error")
				}
				if !strings.HasPrefix(err.Error(), "admission: ") {
					t.Errorf("error %q lacks the package prefix", err)
				}
			}
		})
	}
	t.Run("all problems reported", func(t *testing.T) {
		_, err := NewKeyring(Key{ID: "x", Alg: "HS256"}, Key{ID: "y", Alg: "RS256"})
		if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), `"y"`) {
			t.Errorf("NewKeyring = %v, want both keys named", err)
		}
	})
}

// The keyring keeps copies: changing the caller's key material later does
// not change what it signs or accepts.
func TestKeyringCopiesKeys(t *testing.T) {
	key := hsKey("k1")
	ring := mustRing(t, key)
	tok := mustSign(t)(ring.SignPass(samplePass()))
	for i := range key.Secret {
		key.Secret[i] = 0
	}
	if _, err := ring.VerifyPass(tok, "tour-2030", samplePass().Binding, tokenT0); err != nil {
		t.Fatalf("after zeroing the caller's secret: %v", err)
	}
	other := mustRing(t, hsKey("k1"))
	if _, err := other.VerifyPass(mustSign(t)(ring.SignPass(samplePass())), "tour-2030", samplePass().Binding, tokenT0); err != nil {
		t.Fatalf("token signed after zeroing does not verify with the original secret: %v", err)
	}
}

func TestKeyringJWKS(t *testing.T) {
	ring := mustRing(t, edKey("ed-new"), hsKey("hs-old"), edPublic("ed-old"))
	doc, err := ring.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatalf("JWKS is not JSON: %v\n%s", err, doc)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS has %d keys, want 2 (no HS256): %s", len(set.Keys), doc)
	}
	for i, id := range []string{"ed-new", "ed-old"} {
		k := set.Keys[i]
		want := map[string]string{"kty": "OKP", "crv": "Ed25519", "kid": id, "alg": "EdDSA", "use": "sig",
			"x": tokenB64.EncodeToString(edKey(id).Private.Public().(ed25519.PublicKey))}
		if len(k) != len(want) {
			t.Errorf("key %d = %v, want %v", i, k, want)
		}
		for name, v := range want {
			if k[name] != v {
				t.Errorf("key %d: %s = %q, want %q", i, name, k[name], v)
			}
		}
	}
	if strings.Contains(string(doc), "hs-old") || strings.Contains(string(doc), tokenB64.EncodeToString(hsKey("hs-old").Secret)) {
		t.Errorf("JWKS leaks the HS256 key: %s", doc)
	}

	// An origin verifies a pass with nothing but the JWKS and a stock JWT
	// library.
	tok := mustSign(t)(ring.SignPass(samplePass()))
	byKid := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		x, err := tokenB64.DecodeString(k["x"])
		if err != nil {
			t.Fatal(err)
		}
		byKid[k["kid"]] = x
	}
	parsed, err := jwt.Parse(tok, func(tk *jwt.Token) (any, error) {
		kid, _ := tk.Header["kid"].(string)
		if pub, ok := byKid[kid]; ok {
			return pub, nil
		}
		return nil, errors.New("unknown kid")
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithTimeFunc(func() time.Time { return tokenT0 }))
	if err != nil {
		t.Fatalf("stock jwt library with the JWKS: %v", err)
	}
	if c := parsed.Claims.(jwt.MapClaims); c["jti"] != samplePass().ID || c["typ"] != "wr_pass" {
		t.Errorf("claims = %v", c)
	}

	empty, err := mustRing(t, hsKey("only")).JWKS()
	if err != nil || string(empty) != `{"keys":[]}` {
		t.Errorf("JWKS of an HS256 keyring = %s, %v; want {\"keys\":[]}", empty, err)
	}
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

// Random claims, including odd strings, round trip exactly; what cannot
// (invalid UTF-8) is refused when signing.
func TestTokenRandomClaimsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rings := []*Keyring{mustRing(t, hsKey("h")), mustRing(t, edKey("e"))}
	alphabet := []rune("aZ09-_./ \"\\<>&\x00\x1f\u00e9\u2028\U0001F600")
	str := func(maxLen int) string {
		n := rng.IntN(maxLen + 1)
		if rng.IntN(20) == 0 { // raw bytes, maybe invalid UTF-8
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			return string(b)
		}
		var s strings.Builder
		for s.Len() < n {
			s.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return s.String()
	}
	var signed, refused int
	for i := range 3000 {
		ring := rings[i%2]
		var vid VisitorID
		for j := range vid {
			vid[j] = byte(rng.UintN(256))
		}
		iatS := rng.Int64N(maxUnix/2) + 1
		expS := iatS + 1 + rng.Int64N(maxUnix/2)
		if rng.IntN(2) == 0 {
			expS = iatS + 1 + rng.Int64N(1000)
		}
		iat, exp := time.Unix(iatS, 0).UTC(), time.Unix(expS, 0).UTC()
		now := iat
		tk := Ticket{
			Event: str(40), Visitor: vid, Lane: str(64), Tranche: rng.IntN(1 << 30),
			Number: rng.Uint64(), Binding: str(100), IssuedAt: iat, ExpiresAt: exp,
		}
		p := Pass{
			ID: NewPassID(), Event: tk.Event, Visitor: vid, Lane: tk.Lane, Number: rng.Uint64(),
			Binding: tk.Binding, IssuedAt: iat, ExpiresAt: exp,
		}
		if rng.IntN(10) == 0 {
			p.Number, tk.Number = 0, 0
		}
		valid := tk.Event != "" && tk.Lane != "" && len(tk.Lane) <= 64 &&
			utf8.ValidString(tk.Event) && utf8.ValidString(tk.Lane) && utf8.ValidString(tk.Binding)

		tokT, errT := ring.SignTicket(tk)
		tokP, errP := ring.SignPass(p)
		if !valid {
			if errT == nil || errP == nil {
				t.Fatalf("signing %+v: %v, %v; want refused", tk, errT, errP)
			}
			refused++
			continue
		}
		if errT != nil || errP != nil {
			t.Fatalf("signing %+v: %v, %v", tk, errT, errP)
		}
		gotT, err := ring.VerifyTicket(tokT, tk.Event, tk.Binding, now)
		if err != nil || gotT != tk {
			t.Fatalf("ticket round trip: %v\n got %+v\nwant %+v", err, gotT, tk)
		}
		gotP, err := ring.VerifyPass(tokP, p.Event, p.Binding, now)
		if err != nil || gotP != p {
			t.Fatalf("pass round trip: %v\n got %+v\nwant %+v", err, gotP, p)
		}
		signed++
	}
	if signed < 1000 || refused == 0 {
		t.Errorf("signed %d, refused %d: the generator does not cover both", signed, refused)
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

func splitToken(t testing.TB, tok string) (hdr, payload, sig string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d segments", tok, len(parts))
	}
	return parts[0], parts[1], parts[2]
}

func decodeSeg(t testing.TB, seg string) []byte {
	t.Helper()
	b, err := tokenB64.DecodeString(seg)
	if err != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	return b
}

func decodeToken(t testing.TB, tok string) (header, payload map[string]any) {
	t.Helper()
	h, p, _ := splitToken(t, tok)
	if err := json.Unmarshal(decodeSeg(t, h), &header); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(decodeSeg(t, p), &payload); err != nil {
		t.Fatal(err)
	}
	return header, payload
}

func expiryOf(t testing.TB, tok string) time.Time {
	t.Helper()
	_, p := decodeToken(t, tok)
	return time.Unix(int64(p["exp"].(float64)), 0)
}

func sigOf(t testing.TB, tok string) string {
	_, _, s := splitToken(t, tok)
	return s
}

func flipBit(t testing.TB, sig string) string {
	t.Helper()
	b := decodeSeg(t, sig)
	b[len(b)/2] ^= 0x10
	return tokenB64.EncodeToString(b)
}

func encodeJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return tokenB64.EncodeToString(b)
}

// nonCanonicalIfPossible is nonCanonical(s) when s's last character has
// unused bits, else s with a character changed.
func nonCanonicalIfPossible(s string) string {
	if len(s)%4 == 0 {
		if s[len(s)-1] == 'A' {
			return s[:len(s)-1] + "B"
		}
		return s[:len(s)-1] + "A"
	}
	return nonCanonical(s)
}

func cloneClaims(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// craft builds a token from a header, an encoded payload and raw signature
// bytes.
func craftToken(t testing.TB, header map[string]any, payload string, sig []byte) string {
	return encodeJSON(t, header) + "." + payload + "." + tokenB64.EncodeToString(sig)
}

func craftHMAC(t testing.TB, header map[string]any, payload string, secret []byte) string {
	signing := encodeJSON(t, header) + "." + payload
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signing))
	return signing + "." + tokenB64.EncodeToString(m.Sum(nil))
}

func craftHMAC512(t testing.TB, header map[string]any, payload string, secret []byte) string {
	signing := encodeJSON(t, header) + "." + payload
	sig, err := jwt.SigningMethodHS512.Sign(signing, secret)
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + tokenB64.EncodeToString(sig)
}

func craftEd(t testing.TB, header map[string]any, payload string, priv ed25519.PrivateKey) string {
	signing := encodeJSON(t, header) + "." + payload
	return signing + "." + tokenB64.EncodeToString(ed25519.Sign(priv, []byte(signing)))
}

// resign signs an encoded payload under header with key, properly.
func resign(t testing.TB, key Key, header map[string]any, payload string) string {
	t.Helper()
	switch key.Alg {
	case "HS256":
		return craftHMAC(t, header, payload, key.Secret)
	case "EdDSA":
		return craftEd(t, header, payload, key.Private)
	}
	t.Fatalf("alg %q", key.Alg)
	return ""
}

func resignRaw(t testing.TB, key Key, header map[string]any, payload []byte) string {
	t.Helper()
	return resign(t, key, header, tokenB64.EncodeToString(payload))
}

// ---- fuzzing ----

const (
	fuzzEvent   = "tour-2030"
	fuzzBinding = "dev-9f86d081884c7d65"
)

var fuzzNow = tokenT0.Add(time.Minute)

// fuzzRings sign with HS256 and with EdDSA, each verifying both keys.
func fuzzRings(f *testing.F) []*Keyring {
	return []*Keyring{
		mustRing(f, hsKey("h"), edPublic("e")),
		mustRing(f, edKey("e"), hsKey("h")),
	}
}

// checkVerifyErr fails unless err is one of the documented sentinels.
func checkVerifyErr(t *testing.T, err error) {
	t.Helper()
	for _, s := range []error{ErrBadToken, ErrExpiredToken, ErrWrongEvent, ErrWrongBinding} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %v is none of the sentinels", err)
}

// addTokenSeeds adds valid tokens of both kinds and their usual attacks.
func addTokenSeeds(f *testing.F, rings []*Keyring) {
	for _, ring := range rings {
		tk, p := sampleTicket(), samplePass()
		tt := mustSign(f)(ring.SignTicket(tk))
		pt := mustSign(f)(ring.SignPass(p))
		f.Add(tt)
		f.Add(pt)
		h, payload, _ := splitToken(f, tt)
		f.Add(h + "." + payload + ".")
		f.Add(craftToken(f, map[string]any{"alg": "none", "kid": "h"}, payload, nil))
		f.Add(craftHMAC(f, map[string]any{"alg": "HS256", "kid": "e"}, payload, edKey("e").Private.Public().(ed25519.PublicKey)))
	}
	f.Add("")
	f.Add("..")
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.c2ln")
}

func FuzzVerifyTicket(f *testing.F) {
	rings := fuzzRings(f)
	addTokenSeeds(f, rings)
	f.Fuzz(func(t *testing.T, token string) {
		for _, ring := range rings {
			tk, err := ring.VerifyTicket(token, fuzzEvent, fuzzBinding, fuzzNow)
			if err != nil {
				checkVerifyErr(t, err)
				continue
			}
			if tk.Event != fuzzEvent || tk.Binding != fuzzBinding || !fuzzNow.Before(tk.ExpiresAt) {
				t.Fatalf("accepted a ticket for another context: %+v", tk)
			}
			again, err := ring.SignTicket(tk)
			if err != nil {
				t.Fatalf("accepted ticket %+v does not re-sign: %v", tk, err)
			}
			tk2, err := ring.VerifyTicket(again, fuzzEvent, fuzzBinding, fuzzNow)
			if err != nil || tk2 != tk {
				t.Fatalf("re-signed ticket: %v\n got %+v\nwant %+v", err, tk2, tk)
			}
		}
	})
}

func FuzzVerifyPass(f *testing.F) {
	rings := fuzzRings(f)
	addTokenSeeds(f, rings)
	f.Fuzz(func(t *testing.T, token string) {
		for _, ring := range rings {
			p, err := ring.VerifyPass(token, fuzzEvent, fuzzBinding, fuzzNow)
			if err != nil {
				checkVerifyErr(t, err)
				continue
			}
			if p.Event != fuzzEvent || p.Binding != fuzzBinding || !fuzzNow.Before(p.ExpiresAt) {
				t.Fatalf("accepted a pass for another context: %+v", p)
			}
			again, err := ring.SignPass(p)
			if err != nil {
				t.Fatalf("accepted pass %+v does not re-sign: %v", p, err)
			}
			p2, err := ring.VerifyPass(again, fuzzEvent, fuzzBinding, fuzzNow)
			if err != nil || p2 != p {
				t.Fatalf("re-signed pass: %v\n got %+v\nwant %+v", err, p2, p)
			}
		}
	})
}

// FuzzVerifySignedPayload signs arbitrary payloads with the right key, so
// the fuzzer reaches past the signature: whatever claims the verifiers
// accept must survive a re-sign unchanged.
func FuzzVerifySignedPayload(f *testing.F) {
	key := hsKey("h")
	ring := mustRing(f, key)
	for _, tok := range []string{mustSign(f)(ring.SignTicket(sampleTicket())), mustSign(f)(ring.SignPass(samplePass()))} {
		_, payload, _ := splitToken(f, tok)
		f.Add(decodeSeg(f, payload))
	}
	f.Add(fmt.Appendf(nil, `{"typ":"wr_pass","jti":"a","ev":"tour-2030","vid":"abababababababababababababababab","lane":"l","num":0,"bind":"dev-9f86d081884c7d65","iat":%d,"exp":%d,"x":[{"\"":1}]}`, tokenT0.Unix(), tokenT0.Unix()+3600))
	hdr := map[string]any{"alg": "HS256", "kid": "h", "typ": "JWT"}
	f.Fuzz(func(t *testing.T, payload []byte) {
		tok := resignRaw(t, key, hdr, payload)
		if tk, err := ring.VerifyTicket(tok, fuzzEvent, fuzzBinding, fuzzNow); err != nil {
			checkVerifyErr(t, err)
		} else {
			again, err := ring.SignTicket(tk)
			if err != nil {
				t.Fatalf("accepted ticket %+v does not re-sign: %v", tk, err)
			}
			if tk2, err := ring.VerifyTicket(again, fuzzEvent, fuzzBinding, fuzzNow); err != nil || tk2 != tk {
				t.Fatalf("re-signed ticket: %v\n got %+v\nwant %+v", err, tk2, tk)
			}
		}
		if p, err := ring.VerifyPass(tok, fuzzEvent, fuzzBinding, fuzzNow); err != nil {
			checkVerifyErr(t, err)
		} else {
			again, err := ring.SignPass(p)
			if err != nil {
				t.Fatalf("accepted pass %+v does not re-sign: %v", p, err)
			}
			if p2, err := ring.VerifyPass(again, fuzzEvent, fuzzBinding, fuzzNow); err != nil || p2 != p {
				t.Fatalf("re-signed pass: %v\n got %+v\nwant %+v", err, p2, p)
			}
		}
	})
}
