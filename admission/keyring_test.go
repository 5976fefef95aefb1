package admission

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

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

// TestKeyringKeptBy: a ring is kept by one that verifies all it verifies
// (the same ids, algorithms and keys), whatever signs.
func TestKeyringKeptBy(t *testing.T) {
	for _, a := range algKeys {
		t.Run(a.name, func(t *testing.T) {
			old, next := a.key("2030-01"), a.key("2030-02")
			oldVerify := old
			if a.name == "EdDSA" {
				oldVerify = edPublic(old.ID)
			}
			before := mustRing(t, old)
			during := mustRing(t, next, oldVerify)
			after := mustRing(t, next)
			reused := a.key("another") // the old id with another key
			reused.ID = old.ID
			for _, c := range []struct {
				from, to *Keyring
				want     bool
			}{
				{before, before, true},
				{before, mustRing(t, old), true},
				{before, during, true},
				{during, after, false},
				{before, after, false},
				{before, mustRing(t, reused), false},
			} {
				if got := c.from.KeptBy(c.to); got != c.want {
					t.Errorf("%v KeptBy %v = %v, want %v", c.from.keys[0].id, c.to.keys[0].id, got, c.want)
				}
			}
		})
	}
}
