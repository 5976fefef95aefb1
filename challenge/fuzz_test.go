package challenge_test

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// FuzzVerify feeds Verify arbitrary tokens and nonces. It must never
// panic, must fail with one of its sentinel errors, and whatever it
// accepts must re-encode to the very token given, for the event and
// binding asked.
func FuzzVerify(f *testing.F) {
	pow := newPoW(f)
	for _, p := range []challenge.IssueParams{
		params(),
		{Event: "e", Bits: 1, Puzzles: 1, TTL: time.Second, Now: testNow},
		{Event: "x-63-bytes-long-event-name-for-the-fuzzer-to-play-with-000000", Binding: testBinding, Bits: 3,
			Puzzles: 5, Score: 100, TTL: time.Hour, Now: testNow},
	} {
		token, c, err := pow.Issue(p)
		if err != nil {
			f.Fatal(err)
		}
		nonces := challenge.Solve(c.Seed, c.Bits, c.Puzzles)
		f.Add(token, packNonces(nonces), p.Event, p.Binding[:], testNow.Unix())
		f.Add(token, packNonces(nonces[1:]), p.Event, p.Binding[:], testNow.Unix())
		f.Add(token, packNonces(nonces), p.Event, p.Binding[:], c.ExpiresAt.Unix())
	}
	f.Add("", []byte{}, "", []byte{}, int64(0))
	f.Add("AQ", []byte{1, 2, 3}, "e", make([]byte, 16), int64(-1))
	f.Fuzz(func(t *testing.T, token string, packed []byte, event string, binding []byte, now int64) {
		var b [16]byte
		copy(b[:], binding)
		nonces := unpackNonces(packed)
		c, err := pow.Verify(token, nonces, event, b, time.Unix(now, 0))
		if err != nil {
			for _, e := range []error{challenge.ErrMalformed, challenge.ErrForged, challenge.ErrExpired,
				challenge.ErrWrongEvent, challenge.ErrWrongBinding, challenge.ErrUnsolved} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Verify failed with an unknown error: %v", err)
		}
		if again := pow.Encode(c); again != token {
			t.Fatalf("accepted token %q re-encodes to %q", token, again)
		}
		if c.Event != event || c.Binding != b || len(nonces) != int(c.Puzzles) || now >= c.ExpiresAt.Unix() {
			t.Fatalf("accepted %+v for event %q, binding %x, %d nonces at %d", c, event, b, len(nonces), now)
		}
	})
}

// FuzzDecode feeds the decoder arbitrary token bytes; with seal set, b
// is a plaintext sealed with the right key under a fuzzed id, so that the
// fields inside are reached. It must never panic; a sealed token can only
// be refused as malformed; and whatever decodes re-encodes to the same
// token.
func FuzzDecode(f *testing.F) {
	pow := newPoW(f)
	p := params()
	token, c, _ := issue(f, pow, p)
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	plain := plaintext(p, c)
	f.Add(plain, c.ID[:], true)
	f.Add(raw, c.ID[:], false)
	f.Add(plain[:20], c.ID[:], true)
	f.Add([]byte{1, 'e'}, []byte{}, true)
	f.Add([]byte{}, []byte{}, false)
	f.Fuzz(func(t *testing.T, b, id []byte, seal bool) {
		if seal {
			var i [16]byte
			copy(i[:], id)
			b = sealToken(t, i, b)
		}
		token := base64.RawURLEncoding.EncodeToString(b)
		c, err := pow.Decode(token)
		if err != nil {
			if !errors.Is(err, challenge.ErrMalformed) && !(errors.Is(err, challenge.ErrForged) && !seal) {
				t.Fatalf("Decode(%x, sealed %v) = %v", b, seal, err)
			}
			return
		}
		if again := pow.Encode(c); again != token {
			t.Fatalf("decoded %+v re-encodes to %q, not %q", c, again, token)
		}
	})
}

func packNonces(ns []uint64) []byte {
	var b []byte
	for _, n := range ns {
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return b
}

func unpackNonces(b []byte) []uint64 {
	ns := make([]uint64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		ns = append(ns, binary.BigEndian.Uint64(b))
	}
	return ns
}
