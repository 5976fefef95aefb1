package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/admission"
)

var (
	ctx    = context.Background()
	now    = time.Unix(1800000000, 0)
	secret = []byte("identity-secret-0123456789abcdefgh")
)

func TestSignedIdentity(t *testing.T) {
	v, err := New(Options{Cookie: "shop_id", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if v.Cookie() != "shop_id" || v.Header() != "" {
		t.Fatalf("source: %q %q", v.Cookie(), v.Header())
	}
	good := admission.MakeIdentity(secret, "user-42", now.Add(time.Hour))
	if a, err := v.Verify(ctx, good, now); err != nil || a != "user-42" {
		t.Fatalf("Verify = %q, %v", a, err)
	}
	for _, bad := range []string{"", good + "x", admission.MakeIdentity(secret, "user-42", now), strings.Repeat("a", MaxValueLen+1)} {
		if a, err := v.Verify(ctx, bad, now); !errors.Is(err, ErrInvalid) || a != "" {
			t.Fatalf("Verify(%q) = %q, %v", bad, a, err)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	j := &JWKS{URL: "https://id.example/jwks", Issuer: "https://id.example/", Audience: "waitroom"}
	for name, o := range map[string]Options{
		"no source":      {Secret: secret},
		"two sources":    {Cookie: "a", Header: "b", Secret: secret},
		"no check":       {Cookie: "a"},
		"two checks":     {Cookie: "a", Secret: secret, JWKS: j},
		"short secret":   {Cookie: "a", Secret: []byte("short")},
		"JWKS no issuer": {Cookie: "a", JWKS: &JWKS{URL: j.URL, Audience: j.Audience}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
}

// issuer is an identity provider: its keys, and a JWKS endpoint that
// counts its fetches and can be taken down.
type issuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    map[string]crypto.Signer
	fetches atomic.Int32
	down    atomic.Bool
}

func newIssuer(t testing.TB) *issuer {
	is := &issuer{keys: map[string]crypto.Signer{}}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.keys["rsa-1"], is.keys["ec-1"], is.keys["ed-1"] = rsaKey, ecKey, edKey
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		is.mu.Lock()
		defer is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"keys": publicJWKs(is.keys)})
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func publicJWKs(keys map[string]crypto.Signer) []map[string]string {
	enc := base64.RawURLEncoding.EncodeToString
	var out []map[string]string
	for kid, k := range keys {
		switch pub := k.Public().(type) {
		case *rsa.PublicKey:
			out = append(out, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": enc(pub.N.Bytes()), "e": enc(big.NewInt(int64(pub.E)).Bytes())})
		case *ecdsa.PublicKey:
			b, _ := pub.Bytes()
			out = append(out, map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": enc(b[1:33]), "y": enc(b[33:])})
		case ed25519.PublicKey:
			out = append(out, map[string]string{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": enc(pub)})
		}
	}
	// An encryption key is ignored.
	out = append(out, map[string]string{"kty": "RSA", "kid": "enc-1", "use": "enc", "n": "AQAB", "e": "AQAB"})
	return out
}

// token signs claims with the issuer's key kid.
func (is *issuer) token(t *testing.T, kid string, claims jwt.MapClaims) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[kid]
	is.mu.Unlock()
	var m jwt.SigningMethod
	switch k.(type) {
	case *rsa.PrivateKey:
		m = jwt.SigningMethodRS256
	case *ecdsa.PrivateKey:
		m = jwt.SigningMethodES256
	default:
		m = jwt.SigningMethodEdDSA
	}
	tok := jwt.NewWithClaims(m, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string) jwt.MapClaims {
	return jwt.MapClaims{"iss": "https://id.example/", "aud": "waitroom", "sub": sub,
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}
}

func jwtVerifier(t *testing.T, is *issuer, claim string) *Verifier {
	t.Helper()
	v, err := New(Options{Header: "X-Identity", JWKS: &JWKS{URL: is.srv.URL, Issuer: "https://id.example/",
		Audience: "waitroom", Claim: claim, MinRefresh: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWT(t *testing.T) {
	is := newIssuer(t)
	v := jwtVerifier(t, is, "")
	for _, kid := range []string{"rsa-1", "ec-1", "ed-1"} {
		if a, err := v.Verify(ctx, is.token(t, kid, claims("user-"+kid)), now); err != nil || a != "user-"+kid {
			t.Fatalf("%s: Verify = %q, %v", kid, a, err)
		}
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the key set; want 1", n)
	}
	with := func(k string, val any) jwt.MapClaims {
		c := claims("user-1")
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	bad := map[string]string{
		"other issuer":   is.token(t, "ec-1", with("iss", "https://evil.example/")),
		"other audience": is.token(t, "ec-1", with("aud", "shop")),
		"expired":        is.token(t, "ec-1", with("exp", now.Add(-time.Minute).Unix())),
		"no expiry":      is.token(t, "ec-1", with("exp", nil)),
		"issued later":   is.token(t, "ec-1", with("iat", now.Add(time.Hour).Unix())),
		"no subject":     is.token(t, "ec-1", with("sub", nil)),
		"empty subject":  is.token(t, "ec-1", with("sub", "")),
		"number subject": is.token(t, "ec-1", with("sub", 42)),
		"long subject":   is.token(t, "ec-1", with("sub", strings.Repeat("a", admission.MaxAccountLen+1))),
		"altered":        is.token(t, "ec-1", claims("user-1")) + "A",
		"garbage":        "not.a.jwt",
		"alg none":       unsigned(t, "none"),
		"HS256 with the public key": func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("user-1"))
			tok.Header["kid"] = "ed-1"
			s, _ := tok.SignedString([]byte(is.keys["ed-1"].Public().(ed25519.PublicKey)))
			return s
		}(),
		"another key's kid": func() string {
			// Signed with the EC key, claiming the RSA key's kid.
			tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims("user-1"))
			tok.Header["kid"] = "rsa-1"
			s, _ := tok.SignedString(is.keys["ec-1"])
			return s
		}(),
	}
	for name, tok := range bad {
		if a, err := v.Verify(ctx, tok, now); !errors.Is(err, ErrInvalid) || a != "" {
			t.Errorf("%s: Verify = %q, %v", name, a, err)
		}
	}
	// Another claim holds the account.
	c := claims("sub-1")
	c["email"] = "fan@example.com"
	if a, err := jwtVerifier(t, is, "email").Verify(ctx, is.token(t, "ed-1", c), now); err != nil || a != "fan@example.com" {
		t.Fatalf("claim email: %q, %v", a, err)
	}
}

func unsigned(t *testing.T, alg string) string {
	enc := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": "ed-1", "typ": "JWT"})
	c, _ := json.Marshal(claims("user-1"))
	return enc(h) + "." + enc(c) + "."
}

// TestJWKSRefresh: a token naming a key the set does not hold fetches it
// again, at most once per MinRefresh; a set that cannot be fetched keeps
// the keys held, and before any is held the token is unavailable, not
// invalid.
func TestJWKSRefresh(t *testing.T) {
	is := newIssuer(t)
	v := jwtVerifier(t, is, "")
	is.down.Store(true)
	if _, err := v.Verify(ctx, is.token(t, "ec-1", claims("u")), now); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("key set down at first: %v", err)
	}
	is.down.Store(false)
	at := now.Add(time.Minute)
	if _, err := v.Verify(ctx, is.token(t, "ec-1", claims("u")), at); err != nil {
		t.Fatal(err)
	}
	// The issuer rotates in a new key.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is.mu.Lock()
	is.keys["ec-2"] = k
	is.mu.Unlock()
	before := is.fetches.Load()
	if a, err := v.Verify(ctx, is.token(t, "ec-2", claims("u2")), at.Add(time.Minute)); err != nil || a != "u2" {
		t.Fatalf("a rotated key: %q, %v", a, err)
	}
	if is.fetches.Load() != before+1 {
		t.Fatalf("fetches %d; want one more than %d", is.fetches.Load(), before)
	}
	// Unknown kids within MinRefresh fetch nothing more.
	for i := range 5 {
		tok := is.token(t, "ec-1", claims("u"))
		h, rest, _ := strings.Cut(tok, ".")
		var hd map[string]any
		raw, _ := base64.RawURLEncoding.DecodeString(h)
		json.Unmarshal(raw, &hd)
		hd["kid"] = "nope-" + string(rune('a'+i))
		raw, _ = json.Marshal(hd)
		if _, err := v.Verify(ctx, base64.RawURLEncoding.EncodeToString(raw)+"."+rest, at.Add(time.Minute+time.Second)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if is.fetches.Load() != before+1 {
		t.Fatalf("unknown kids fetched the set again: %d fetches", is.fetches.Load())
	}
	// Down later: the keys held go on working.
	is.down.Store(true)
	long := claims("u")
	long["exp"] = now.Add(5 * time.Hour).Unix()
	if _, err := v.Verify(ctx, is.token(t, "rsa-1", long), at.Add(3*time.Hour)); err != nil {
		t.Fatalf("key set down after a fetch: %v", err)
	}
}

func TestParseKeySet(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":   "{",
		"no keys":    `{"keys":[]}`,
		"only enc":   `{"keys":[{"kty":"OKP","crv":"Ed25519","use":"enc","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		"weak RSA":   `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		"duplicates": `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},{"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		"wrong alg":  `{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"RS256","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		"off curve":  `{"keys":[{"kty":"EC","crv":"P-256","x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","y":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`,
	} {
		if keys, err := parseKeySet([]byte(doc)); err == nil {
			t.Errorf("%s: parsed %v", name, keys)
		}
	}
	keys, err := parseKeySet([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	if err != nil || keys[""].alg != "EdDSA" {
		t.Fatalf("an Ed25519 key without kid: %v, %v", keys, err)
	}
}

func FuzzParseKeySet(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"},{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		keys, err := parseKeySet(doc)
		if err != nil {
			return
		}
		for kid, k := range keys {
			switch k.key.(type) {
			case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			default:
				t.Fatalf("key %q of type %T", kid, k.key)
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	is := newIssuer(f)
	f.Add(admission.MakeIdentity(secret, "user-1", now.Add(time.Hour)))
	f.Add("eyJhbGciOiJFUzI1NiJ9.e30.")
	f.Add("a.b.c")
	sv, _ := New(Options{Cookie: "c", Secret: secret})
	jv, _ := New(Options{Cookie: "c", JWKS: &JWKS{URL: is.srv.URL, Issuer: "https://id.example/", Audience: "waitroom"}})
	f.Fuzz(func(t *testing.T, value string) {
		for _, v := range []*Verifier{sv, jv} {
			a, err := v.Verify(ctx, value, now)
			if err == nil && (a == "" || len(a) > admission.MaxAccountLen) {
				t.Fatalf("accepted %q as account %q", value, a)
			}
			if err != nil && a != "" {
				t.Fatalf("account %q with an error", a)
			}
		}
	})
}
