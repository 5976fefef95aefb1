package admission

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"testing"
	"time"
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
		renewed := p
		renewed.AdmittedAt = p.IssuedAt.Add(-time.Hour)
		f.Add(mustSign(f)(ring.SignPass(renewed)))
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
	renewed := samplePass()
	renewed.AdmittedAt = renewed.IssuedAt.Add(-time.Hour)
	for _, tok := range []string{mustSign(f)(ring.SignTicket(sampleTicket())), mustSign(f)(ring.SignPass(samplePass())),
		mustSign(f)(ring.SignPass(renewed))} {
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
