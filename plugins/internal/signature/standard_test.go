package signature

import (
	"bytes"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// The example of the Standard Webhooks specification (and of its
// reference libraries), checked with openssl:
//
//	printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
//	  openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p) -binary | base64
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = "1614265330"
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignStandardSpecExample(t *testing.T) {
	key, err := Key(specSecret)
	if err != nil {
		t.Fatal(err)
	}
	ts, sig := SignStandard(key, specID, time.Unix(1614265330, 0), []byte(specBody))
	if ts != specTS || sig != specSig {
		t.Errorf("SignStandard = %q, %q; the spec's example is %q, %q", ts, sig, specTS, specSig)
	}
}

func TestKey(t *testing.T) {
	raw := "a-secret-of-at-least-32-bytes-long"
	if k, err := Key(raw); err != nil || string(k) != raw {
		t.Errorf("Key(plain) = %q, %v", k, err)
	}
	for _, bad := range []string{"whsec_", "whsec_!!!!", "whsec_AAAA", "whsec_" + strings.Repeat("A", 100)} {
		if _, err := Key(bad); !errors.Is(err, ErrSecret) {
			t.Errorf("Key(%q) = %v, want ErrSecret", bad, err)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	key, _ := Key(specSecret)
	now := time.Unix(1614265330, 0)
	body := []byte(specBody)
	other := "v1," + strings.Repeat("A", 43) + "="
	tests := []struct {
		name, id, ts, sigs string
		body               []byte
		now                time.Time
		want               error
	}{
		{"valid", specID, specTS, specSig, body, now, nil},
		{"within tolerance", specID, specTS, specSig, body, now.Add(5 * time.Minute), nil},
		{"rotation: second signature matches", specID, specTS, other + " " + specSig, body, now, nil},
		{"other versions skipped", specID, specTS, "v1a,abc " + specSig, body, now, nil},
		{"stale", specID, specTS, specSig, body, now.Add(5*time.Minute + time.Second), ErrStale},
		{"from the future", specID, specTS, specSig, body, now.Add(-6 * time.Minute), ErrStale},
		{"other body", specID, specTS, specSig, []byte(`{"test": 2432232315}`), now, ErrMismatch},
		{"other id", specID + "x", specTS, specSig, body, now, ErrMismatch},
		{"other time", specID, "1614265331", specSig, body, now, ErrMismatch},
		{"no id", "", specTS, specSig, body, now, ErrMalformed},
		{"id with a dot", "msg.1", specTS, specSig, body, now, ErrMalformed},
		{"no signature", specID, specTS, "", body, now, ErrMalformed},
		{"only other versions", specID, specTS, "v2,abc", body, now, ErrMalformed},
		{"no comma", specID, specTS, "v1" + specSig[3:], body, now, ErrMalformed},
		{"bad base64", specID, specTS, "v1,@@@", body, now, ErrMalformed},
		{"short mac", specID, specTS, "v1,AAAA", body, now, ErrMalformed},
		{"bad timestamp", specID, "+1614265330", specSig, body, now, ErrMalformed},
		{"negative timestamp", specID, "-1", specSig, body, now, ErrMalformed},
		{"huge header", specID, specTS, strings.Repeat(specSig+" ", 40), body, now, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyStandard(key, tc.id, tc.ts, tc.sigs, tc.body, tc.now, 0)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("VerifyStandard = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzVerifyStandard: any headers are refused or accepted without a
// panic; only the genuine signature of the exact (id, timestamp, body)
// passes, and whatever SignStandard makes verifies.
func FuzzVerifyStandard(f *testing.F) {
	f.Add(specID, specTS, specSig, []byte(specBody))
	f.Add("", "", "", []byte{})
	f.Add("a", "0", "v1, v1,,", []byte("x"))
	f.Add("msg_1", "1614265330", "v1a,xx v2,yy v1,"+strings.Repeat("A", 44), []byte("{}"))
	key, _ := Key(specSecret)
	now := time.Unix(1614265330, 0)
	f.Fuzz(func(t *testing.T, id, ts, sigs string, body []byte) {
		err := VerifyStandard(key, id, ts, sigs, body, now, 0)
		if err == nil {
			// Accepted: the genuine signature of this exact text is in it.
			want := "v1," + base64.StdEncoding.EncodeToString(computeStandard(key, id, ts, body))
			if !slices.Contains(strings.Fields(sigs), want) {
				t.Fatalf("accepted %q %q %q without its signature %s", id, ts, sigs, want)
			}
		} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrMismatch) && !errors.Is(err, ErrStale) {
			t.Fatalf("error %v wraps none of the sentinels", err)
		}
		if id != "" && len(id) <= maxIDLen && !strings.ContainsAny(id, ". \t") {
			wts, wsig := SignStandard(key, id, now, body)
			if err := VerifyStandard(key, id, wts, wsig, bytes.Clone(body), now, 0); err != nil {
				t.Fatalf("own signature refused: %v", err)
			}
		}
	})
}

// FuzzKey: any configured secret gives a key or ErrSecret, never a
// panic; a whsec_ key is 24 to 64 bytes, and a plain secret is itself.
func FuzzKey(f *testing.F) {
	f.Add(specSecret)
	f.Add("whsec_")
	f.Add("whsec_====")
	f.Add("a-plain-secret-of-at-least-32-bytes")
	f.Fuzz(func(t *testing.T, secret string) {
		k, err := Key(secret)
		switch {
		case err != nil:
			if !errors.Is(err, ErrSecret) || !strings.HasPrefix(secret, SecretPrefix) {
				t.Fatalf("Key(%q) = %v", secret, err)
			}
		case strings.HasPrefix(secret, SecretPrefix):
			if len(k) < MinStandardKey || len(k) > MaxStandardKey {
				t.Fatalf("Key(%q) is %d bytes", secret, len(k))
			}
		case string(k) != secret:
			t.Fatalf("Key(%q) = %q", secret, k)
		}
	})
}
