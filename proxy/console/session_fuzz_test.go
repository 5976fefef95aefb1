package console

import (
	"testing"
	"time"
)

// FuzzParseSession: a cookie value from the network never panics the
// parser, and one it accepts is exactly a value this key signed (the
// encoding is canonical: re-signing its payload gives the same bytes).
func FuzzParseSession(f *testing.F) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := newSessions(testToken, time.Hour, func() time.Time { return now })
	// The same in every fuzz worker (each runs this setup again).
	good := s.encode(session{id: [sidLen]byte{1, 2, 3}, expires: now.Add(time.Minute)})
	for _, seed := range []string{good, "", ".", good[:10], good + "=", "A.B"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ss, ok := s.parse(v)
		if !ok {
			return
		}
		if v != good {
			t.Fatalf("accepted %q, which this key did not sign", v)
		}
		if !ss.expires.After(now) {
			t.Fatalf("accepted an expired session %v", ss.expires)
		}
	})
}
