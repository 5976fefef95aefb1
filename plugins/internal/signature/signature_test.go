package signature

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	secret := []byte("a-secret-of-at-least-32-bytes-long")
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"score":12}`)
	h := Sign(secret, now, body)
	if !strings.HasPrefix(h, "t=1700000000,v1=") || len(h) != len("t=1700000000,v1=")+64 {
		t.Fatalf("Sign = %q", h)
	}
	tests := []struct {
		name      string
		secret    []byte
		header    string
		body      []byte
		now       time.Time
		tolerance time.Duration
		want      error
	}{
		{"valid", secret, h, body, now, time.Minute, nil},
		{"default tolerance", secret, h, body, now.Add(DefaultTolerance), 0, nil},
		{"past default tolerance", secret, h, body, now.Add(DefaultTolerance + time.Second), 0, ErrStale},
		{"stale", secret, h, body, now.Add(2 * time.Minute), time.Minute, ErrStale},
		{"early", secret, h, body, now.Add(-2 * time.Minute), time.Minute, ErrStale},
		{"empty body signed, other sent", secret, Sign(secret, now, nil), body, now, time.Minute, ErrMismatch},
		{"other secret", []byte("another"), h, body, now, time.Minute, ErrMismatch},
		{"too long", secret, h + strings.Repeat(",x=y", 300), body, now, time.Minute, ErrMalformed},
		{"not key=value", secret, "t=1700000000,garbage", body, now, time.Minute, ErrMalformed},
		{"negative t", secret, "t=-5,v1=" + strings.Repeat("ab", 32), body, now, time.Minute, ErrMalformed},
		{"short mac", secret, "t=1700000000,v1=abcd", body, now, time.Minute, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.secret, tc.header, tc.body, tc.now, tc.tolerance)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "signature: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// FuzzVerify feeds arbitrary headers (untrusted: they come from whoever
// calls a receiver) to Verify: it must not panic, and only the real
// signature passes.
func FuzzVerify(f *testing.F) {
	secret := []byte("a-secret-of-at-least-32-bytes-long")
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"id":"1"}`)
	good := Sign(secret, now, body)
	for _, s := range []string{good, "", "t=", "v1=", "t=1,v1=00", good + ",v1=zz", "t=1700000000,v1=" + strings.Repeat("0", 64), ",,,", "t=99999999999999999999,v1=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		err := Verify(secret, header, body, now, time.Minute)
		if err == nil && !strings.Contains(header, good[len("t=1700000000,"):]) {
			t.Fatalf("Verify accepted %q", header)
		}
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrMismatch) && !errors.Is(err, ErrStale) {
			t.Fatalf("Verify(%q) = %v, not one of the sentinels", header, err)
		}
	})
}
