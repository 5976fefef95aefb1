package challenge_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/memstore"
	"github.com/waitroom/waitroom/internal/testkit/racedetect"
)

var (
	testKey     = bytes.Repeat([]byte{0x42}, 32)
	testBinding = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testNow     = time.Unix(1_900_000_000, 250_000_000)
)

func newPoW(t testing.TB) *challenge.PoW {
	t.Helper()
	g := memstore.New(memstore.Options{Window: params().TTL})
	t.Cleanup(func() { g.Close() })
	p, err := challenge.NewPoW(testKey, g)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func params() challenge.IssueParams {
	return challenge.IssueParams{Event: "summer-fest", Binding: testBinding, Bits: 6, Puzzles: 8, Score: 42,
		TTL: 2 * time.Minute, Now: testNow}
}

// issue issues a challenge of p and solves it.
func issue(t testing.TB, pow *challenge.PoW, p challenge.IssueParams) (string, challenge.Challenge, []uint64) {
	t.Helper()
	token, c, err := pow.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	return token, c, challenge.Solve(c.Seed, c.Bits, c.Puzzles)
}

func TestNewPoW(t *testing.T) {
	g := memstore.New(memstore.Options{})
	defer g.Close()
	for _, tc := range []struct {
		name  string
		key   []byte
		guard challenge.ReplayGuard
		ok    bool
	}{
		{"32-byte key", make([]byte, 32), g, true},
		{"64-byte key", make([]byte, 64), g, true},
		{"31-byte key", make([]byte, 31), g, false},
		{"no key", nil, g, false},
		{"no guard", make([]byte, 32), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := challenge.NewPoW(tc.key, tc.guard)
			if (err == nil) != tc.ok || (p != nil) != tc.ok {
				t.Fatalf("NewPoW = %v, %v; want ok %v", p, err, tc.ok)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "challenge: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	pow := newPoW(t)
	for _, tc := range []struct {
		name string
		edit func(*challenge.IssueParams)
	}{
		{"default", func(*challenge.IssueParams) {}},
		{"one puzzle one bit", func(p *challenge.IssueParams) { p.Bits, p.Puzzles = 1, 1 }},
		{"64 puzzles", func(p *challenge.IssueParams) { p.Bits, p.Puzzles = 2, 64 }},
		{"one-byte event", func(p *challenge.IssueParams) { p.Event = "x" }},
		{"64-byte event", func(p *challenge.IssueParams) { p.Event = strings.Repeat("e", 64) }},
		{"binary event", func(p *challenge.IssueParams) { p.Event = "\x00\xff/é" }},
		{"score 0", func(p *challenge.IssueParams) { p.Score = 0 }},
		{"score 100", func(p *challenge.IssueParams) { p.Score = 100 }},
		{"whole-second now", func(p *challenge.IssueParams) { p.Now = time.Unix(1_900_000_000, 0) }},
		{"1ns TTL", func(p *challenge.IssueParams) { p.TTL = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := params()
			tc.edit(&p)
			token, issued, nonces := issue(t, pow, p)
			if strings.ContainsAny(token, "+/=") {
				t.Fatalf("token %q is not unpadded base64url", token)
			}
			want := challenge.Challenge{Event: p.Event, Binding: p.Binding, Bits: p.Bits, Puzzles: p.Puzzles,
				Score: p.Score, ID: issued.ID, Seed: issued.Seed,
				IssuedAt: time.Unix(p.Now.Unix(), 0).UTC(), ExpiresAt: issued.ExpiresAt}
			if issued != want {
				t.Fatalf("Issue = %+v, want %+v", issued, want)
			}
			// The expiry is Now+TTL rounded up to a second.
			if d := issued.ExpiresAt.Sub(p.Now); d < p.TTL || d >= p.TTL+time.Second {
				t.Fatalf("ExpiresAt %v is %v after Now, TTL %v", issued.ExpiresAt, d, p.TTL)
			}
			got, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got != issued {
				t.Fatalf("Verify = %+v, Issue gave %+v", got, issued)
			}
			if challenge.SeedHex(got) != hex.EncodeToString(got.Seed[:]) || len(challenge.SeedHex(got)) != 32 {
				t.Fatalf("SeedHex = %q", challenge.SeedHex(got))
			}
			if err := pow.Redeem(context.Background(), got); err != nil {
				t.Fatalf("Redeem: %v", err)
			}
		})
	}
}

// sealToken builds a token from its documented parts, as another
// implementation of the server would: the id, and the plaintext sealed
// under the key derived from testKey.
func sealToken(t testing.TB, id [16]byte, plain []byte) []byte {
	t.Helper()
	m := hmac.New(sha256.New, testKey)
	m.Write([]byte("waitroom/pow/v2 aes-256-gcm"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	ad := append([]byte("waitroom/pow/v2\x00\x02"), id[:]...)
	raw := append([]byte{0x02}, id[:]...)
	return gcm.Seal(raw, id[:12], plain, ad)
}

// plaintext is the sealed part of a token of p, c.
func plaintext(p challenge.IssueParams, c challenge.Challenge) []byte {
	b := []byte{byte(len(p.Event))}
	b = append(b, p.Event...)
	b = append(b, p.Binding[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(p.Now.Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.ExpiresAt.Unix()))
	return append(b, p.Bits, p.Puzzles, p.Score)
}

// TestWireFormat rebuilds a token byte by byte from the documented format,
// as another implementation of the server would.
func TestWireFormat(t *testing.T) {
	pow := newPoW(t)
	p := params()
	token, c, _ := issue(t, pow, p)
	raw := sealToken(t, c.ID, plaintext(p, c))
	if want := base64.RawURLEncoding.EncodeToString(raw); token != want {
		t.Fatalf("token\n%s\nwant\n%s", token, want)
	}
	if !bytes.Equal(c.Seed[:], raw[len(raw)-16:]) {
		t.Fatalf("seed %x, want the GCM tag %x", c.Seed, raw[len(raw)-16:])
	}
	// Sub-puzzle i: SHA-256(seed || uint32be(i) || uint64be(n)).
	nonces := challenge.Solve(c.Seed, c.Bits, c.Puzzles)
	for i, n := range nonces {
		msg := append(append(c.Seed[:], binary.BigEndian.AppendUint32(nil, uint32(i))...), binary.BigEndian.AppendUint64(nil, n)...)
		h := sha256.Sum256(msg)
		if len(msg) != 28 || bits.LeadingZeros32(binary.BigEndian.Uint32(h[:])) < int(c.Bits) {
			t.Fatalf("nonce %d of puzzle %d: hash %x", n, i, h)
		}
	}
}

// TestScoreSealed: nothing in a token tells its score. Two groups of
// tokens, alike but for a score of 0 and of 100, have the same length,
// and no byte position holds one value in every token of a group and
// another in every token of the other; the token's clear part (version
// and id) is the same for a given id whatever the score.
func TestScoreSealed(t *testing.T) {
	pow := newPoW(t)
	const n = 64
	var groups [2][][]byte
	for g, score := range []uint8{0, 100} {
		for range n {
			p := params()
			p.Score = score
			token, c, err := pow.Issue(p)
			if err != nil {
				t.Fatal(err)
			}
			if c.Score != score {
				t.Fatalf("Issue kept score %d, want %d", c.Score, score)
			}
			raw, _ := base64.RawURLEncoding.DecodeString(token)
			groups[g] = append(groups[g], raw)
		}
	}
	if len(groups[0][0]) != len(groups[1][0]) {
		t.Fatalf("a token of score 0 is %d bytes, of score 100 %d", len(groups[0][0]), len(groups[1][0]))
	}
	constant := func(g [][]byte, i int) (byte, bool) {
		for _, b := range g[1:] {
			if b[i] != g[0][i] {
				return 0, false
			}
		}
		return g[0][i], true
	}
	for i := range groups[0][0] {
		a, okA := constant(groups[0], i)
		b, okB := constant(groups[1], i)
		if okA && okB && a != b {
			t.Fatalf("byte %d is %#x in every token of score 0 and %#x in every one of score 100", i, a, b)
		}
	}
	// The same challenge sealed with scores 0 and 100: the clear part is
	// the same, the rest differs all over.
	_, c, _ := issue(t, pow, params())
	c.Score = 0
	t0, _ := base64.RawURLEncoding.DecodeString(pow.Encode(c))
	c.Score = 100
	t100, _ := base64.RawURLEncoding.DecodeString(pow.Encode(c))
	if !bytes.Equal(t0[:17], t100[:17]) {
		t.Fatal("the clear part of a token depends on the score")
	}
	if bytes.Equal(t0[len(t0)-16:], t100[len(t100)-16:]) {
		t.Fatal("the seed does not depend on the sealed fields")
	}
}

func TestIssueRejects(t *testing.T) {
	pow := newPoW(t)
	for _, tc := range []struct {
		name string
		edit func(*challenge.IssueParams)
	}{
		{"empty event", func(p *challenge.IssueParams) { p.Event = "" }},
		{"65-byte event", func(p *challenge.IssueParams) { p.Event = strings.Repeat("e", 65) }},
		{"0 bits", func(p *challenge.IssueParams) { p.Bits = 0 }},
		{"33 bits", func(p *challenge.IssueParams) { p.Bits = 33 }},
		{"0 puzzles", func(p *challenge.IssueParams) { p.Puzzles = 0 }},
		{"65 puzzles", func(p *challenge.IssueParams) { p.Puzzles = 65 }},
		{"score 101", func(p *challenge.IssueParams) { p.Score = 101 }},
		{"zero TTL", func(p *challenge.IssueParams) { p.TTL = 0 }},
		{"negative TTL", func(p *challenge.IssueParams) { p.TTL = -time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := params()
			tc.edit(&p)
			if token, _, err := pow.Issue(p); err == nil || token != "" {
				t.Fatalf("Issue(%+v) = %q, %v; want an error", p, token, err)
			} else if !strings.HasPrefix(err.Error(), "challenge: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestIssueDefaultsNowAndRandomID(t *testing.T) {
	pow := newPoW(t)
	p := params()
	p.Now = time.Time{}
	before := time.Now()
	_, a, err := pow.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	_, b, _ := pow.Issue(p)
	if a.IssuedAt.Unix() < before.Unix() || a.IssuedAt.After(time.Now()) {
		t.Fatalf("IssuedAt %v is not now", a.IssuedAt)
	}
	if a.ID == b.ID || a.Seed == b.Seed || a.ID == [16]byte{} {
		t.Fatalf("two challenges share an id or a seed: %x %x / %x %x", a.ID, b.ID, a.Seed, b.Seed)
	}
}

// TestTamperedFields flips one byte anywhere in a token: the version
// byte makes it malformed, every other byte (the id in the clear, the
// sealed fields, the tag) makes it fail to open.
func TestTamperedFields(t *testing.T) {
	pow := newPoW(t)
	p := params()
	token, _, nonces := issue(t, pow, p)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	for at := range raw {
		want := challenge.ErrForged
		if at == 0 {
			want = challenge.ErrMalformed
		}
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(raw)
			b[at] ^= flip
			c, err := pow.Verify(base64.RawURLEncoding.EncodeToString(b), nonces, p.Event, p.Binding, p.Now)
			if !errors.Is(err, want) {
				t.Fatalf("byte %d ^ %#x: Verify = %v, want %v", at, flip, err, want)
			}
			if c != (challenge.Challenge{}) {
				t.Fatalf("a refused token gave a challenge: %+v", c)
			}
		}
	}
	// A byte more or less is another event length to the decoder: the
	// token fails to open.
	for name, b := range map[string][]byte{"a byte more": append(bytes.Clone(raw), 0), "a byte less": raw[:len(raw)-1]} {
		if _, err := pow.Verify(base64.RawURLEncoding.EncodeToString(b), nonces, p.Event, p.Binding, p.Now); !errors.Is(err, challenge.ErrForged) {
			t.Fatalf("%s: Verify = %v, want ErrForged", name, err)
		}
	}
	t.Run("other key", func(t *testing.T) {
		other, err := challenge.NewPoW(bytes.Repeat([]byte{0x43}, 32), memstore.New(memstore.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Verify(token, nonces, p.Event, p.Binding, p.Now); !errors.Is(err, challenge.ErrForged) {
			t.Fatalf("Verify with another key = %v, want ErrForged", err)
		}
	})
}

func TestMalformedTokens(t *testing.T) {
	pow := newPoW(t)
	p := params()
	p.Event = "summer-fest-2"
	token, c, nonces := issue(t, pow, p)
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	enc := base64.RawURLEncoding.EncodeToString
	plain := plaintext(p, c)
	// sealed seals a plaintext with the right key, so that only the
	// structure inside is wrong.
	sealed := func(b []byte) string { return enc(sealToken(t, c.ID, b)) }
	withField := func(off int, v byte) string {
		b := bytes.Clone(plain)
		b[1+len(p.Event)+off] = v
		return sealed(b)
	}
	for _, tc := range []struct {
		name, token string
	}{
		{"empty", ""},
		{"one char", "A"},
		{"truncated by one char", token[:len(token)-1]},
		{"truncated to the clear part", enc(raw[:17])},
		{"half", token[:len(token)/2]},
		{"padded", base64.URLEncoding.EncodeToString(raw)},
		{"standard alphabet", base64.StdEncoding.EncodeToString(raw)},
		{"newline inside", token[:10] + "\n" + token[10:]},
		{"CRLF at the end", token + "\r\n"},
		{"space", token[:10] + " " + token[11:]},
		{"non-canonical last char", nonCanonical(token)},
		{"too long", strings.Repeat("A", 400)},
		{"version 1", enc(append([]byte{1}, raw[1:]...))},
		{"event length 0", sealed(append([]byte{0}, plain[1+len(p.Event):]...))},
		{"event length longer than the event", sealed(append([]byte{byte(len(p.Event) + 1)}, plain[1:]...))},
		{"one byte more", sealed(append(bytes.Clone(plain), 0))},
		{"one byte less", sealed(plain[:len(plain)-1])},
		{"bits 0", withField(32, 0)},
		{"bits 33", withField(32, 33)},
		{"puzzles 0", withField(33, 0)},
		{"puzzles 65", withField(33, 65)},
		{"score 101", withField(34, 101)},
		{"expires before issued", withField(24, 0x80)},
		{"expires at issued", func() string {
			b := bytes.Clone(plain)
			f := b[1+len(p.Event):]
			copy(f[24:32], f[16:24])
			return sealed(b)
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := pow.Verify(tc.token, nonces, p.Event, p.Binding, p.Now)
			if !errors.Is(err, challenge.ErrMalformed) {
				t.Fatalf("Verify(%q) = %v, want ErrMalformed", tc.token, err)
			}
			if c != (challenge.Challenge{}) {
				t.Fatalf("a refused token gave a challenge: %+v", c)
			}
		})
	}
}

// flipChar changes the i-th character of token to another base64url one.
func flipChar(token string, i int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	c := strings.IndexByte(alphabet, token[i])
	return token[:i] + string(alphabet[(c+1)%64]) + token[i+1:]
}

// nonCanonical changes the unused low bits of the token's last character,
// which lax base64 decoders ignore.
func nonCanonical(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, token[len(token)-1])
	return token[:len(token)-1] + string(alphabet[last^1])
}

func TestVerifyRefuses(t *testing.T) {
	pow := newPoW(t)
	p := params()
	token, c, nonces := issue(t, pow, p)
	unsolved := append([]uint64(nil), nonces...)
	for unsolved[3]++; ; unsolved[3]++ { // the next nonce that does not solve puzzle 3
		if _, err := pow.Verify(token, unsolved, p.Event, p.Binding, p.Now); err != nil {
			break
		}
	}
	big := append([]uint64(nil), nonces...)
	big[0] = challenge.NonceLimit + nonces[0] // same low bits, but no JavaScript number
	otherBinding := p.Binding
	otherBinding[15] ^= 1
	for _, tc := range []struct {
		name    string
		nonces  []uint64
		event   string
		binding [16]byte
		now     time.Time
		want    error
	}{
		{"expired at ExpiresAt", nonces, p.Event, p.Binding, c.ExpiresAt, challenge.ErrExpired},
		{"expired long after", nonces, p.Event, p.Binding, c.ExpiresAt.Add(time.Hour), challenge.ErrExpired},
		{"wrong event", nonces, "winter-fest", p.Binding, p.Now, challenge.ErrWrongEvent},
		{"event prefix", nonces, p.Event[:5], p.Binding, p.Now, challenge.ErrWrongEvent},
		{"wrong binding", nonces, p.Event, otherBinding, p.Now, challenge.ErrWrongBinding},
		{"no nonces", nil, p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
		{"one nonce short", nonces[:len(nonces)-1], p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
		{"one nonce too many", append(append([]uint64(nil), nonces...), 0), p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
		{"nonce 2^53", big, p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
		{"unsolved nonce", unsolved, p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
		{"nonces out of order", reversed(nonces), p.Event, p.Binding, p.Now, challenge.ErrUnsolved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pow.Verify(token, tc.nonces, tc.event, tc.binding, tc.now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			// The token is authentic: the challenge comes back for logs.
			if got.ID != c.ID || got.Score != c.Score || got.Event != c.Event {
				t.Fatalf("Verify returned %+v with %v, want the challenge %+v", got, err, c)
			}
		})
	}
	t.Run("valid one second before expiry", func(t *testing.T) {
		if _, err := pow.Verify(token, nonces, p.Event, p.Binding, c.ExpiresAt.Add(-time.Nanosecond)); err != nil {
			t.Fatal(err)
		}
	})
}

func reversed(s []uint64) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestEventSwap: a challenge issued for event A, with its solution, is no
// use for event B.
func TestEventSwap(t *testing.T) {
	pow := newPoW(t)
	p := params()
	p.Event = "A"
	token, _, nonces := issue(t, pow, p)
	if _, err := pow.Verify(token, nonces, "B", p.Binding, p.Now); !errors.Is(err, challenge.ErrWrongEvent) {
		t.Fatalf("A's challenge for B: %v, want ErrWrongEvent", err)
	}
	if _, err := pow.Verify(token, nonces, "A", p.Binding, p.Now); err != nil {
		t.Fatalf("A's challenge for A: %v", err)
	}
}

func TestRedeemOnce(t *testing.T) {
	pow := newPoW(t)
	ctx := context.Background()
	p := params()
	token, _, nonces := issue(t, pow, p)
	c, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := pow.Redeem(ctx, c); err != nil {
		t.Fatalf("first Redeem: %v", err)
	}
	// Verify does not consult the guard: the solution is still valid...
	c2, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now)
	if err != nil {
		t.Fatalf("Verify after Redeem: %v", err)
	}
	// ...but it cannot be redeemed again.
	for range 2 {
		if err := pow.Redeem(ctx, c2); !errors.Is(err, challenge.ErrReplayed) {
			t.Fatalf("second Redeem = %v, want ErrReplayed", err)
		}
	}
	// Another challenge, same parameters, is independent.
	token3, _, nonces3 := issue(t, pow, p)
	c3, err := pow.Verify(token3, nonces3, p.Event, p.Binding, p.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := pow.Redeem(ctx, c3); err != nil {
		t.Fatalf("Redeem of a second challenge: %v", err)
	}
}

func TestRedeemGuardFailure(t *testing.T) {
	g := memstore.New(memstore.Options{})
	pow, err := challenge.NewPoW(testKey, g)
	if err != nil {
		t.Fatal(err)
	}
	p := params()
	p.Now = time.Now()
	_, c, _ := issue(t, pow, p)
	g.Close()
	err = pow.Redeem(context.Background(), c)
	if err == nil || errors.Is(err, challenge.ErrReplayed) || !errors.Is(err, memstore.ErrClosed) {
		t.Fatalf("Redeem with a closed guard = %v, want the guard's error", err)
	}
}

func TestSolve(t *testing.T) {
	seed := [16]byte{0xde, 0xad, 0xbe, 0xef}
	for _, tc := range []struct{ bits, puzzles uint8 }{{1, 1}, {4, 3}, {8, 16}, {12, 2}} {
		nonces := challenge.Solve(seed, tc.bits, tc.puzzles)
		if len(nonces) != int(tc.puzzles) {
			t.Fatalf("Solve(%d, %d) gave %d nonces", tc.bits, tc.puzzles, len(nonces))
		}
		for i, n := range nonces {
			// n is the smallest solution: every smaller nonce fails.
			for m := uint64(0); m <= n; m++ {
				var msg [28]byte
				copy(msg[:], seed[:])
				binary.BigEndian.PutUint32(msg[16:], uint32(i))
				binary.BigEndian.PutUint64(msg[20:], m)
				h := sha256.Sum256(msg[:])
				if ok := bits.LeadingZeros32(binary.BigEndian.Uint32(h[:])) >= int(tc.bits); ok != (m == n) {
					t.Fatalf("bits %d puzzle %d: nonce %d solves %v, Solve chose %d", tc.bits, i, m, ok, n)
				}
			}
		}
	}
}

// TestRedeemAllocs: redeeming in the memstore guard allocates nothing
// (once its exact set has stopped growing).
func TestRedeemAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	g := memstore.New(memstore.Options{Window: params().TTL, MaxExact: 64})
	defer g.Close()
	pow, err := challenge.NewPoW(testKey, g)
	if err != nil {
		t.Fatal(err)
	}
	p := params()
	p.Now = time.Now()
	_, c, _ := issue(t, pow, p)
	var n uint64
	redeem := func() {
		n++
		binary.BigEndian.PutUint64(c.ID[8:], n)
		if err := pow.Redeem(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 {
		redeem()
	}
	if a := testing.AllocsPerRun(500, redeem); a != 0 {
		t.Fatalf("Redeem allocates %.1f times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { pow.Redeem(context.Background(), c) }); a != 0 {
		t.Fatalf("Redeem of a replay allocates %.1f times per call", a)
	}
}

// TestVerifyAllocs: verifying a good solution allocates nothing.
func TestVerifyAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	pow := newPoW(t)
	p := params()
	p.Puzzles = 16
	token, _, nonces := issue(t, pow, p)
	if n := testing.AllocsPerRun(500, func() {
		if _, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Verify allocates %.1f times per call", n)
	}
	bad := append([]uint64(nil), nonces...)
	bad[0]++
	for {
		if _, err := pow.Verify(token, bad, p.Event, p.Binding, p.Now); err != nil {
			break
		}
		bad[0]++
	}
	forged := flipChar(token, 20)
	for name, fn := range map[string]func(){
		"unsolved": func() { pow.Verify(token, bad, p.Event, p.Binding, p.Now) },
		"forged":   func() { pow.Verify(forged, nonces, p.Event, p.Binding, p.Now) },
		"expired":  func() { pow.Verify(token, nonces, p.Event, p.Binding, p.Now.Add(time.Hour)) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("Verify (%s) allocates %.1f times per call", name, n)
		}
	}
}
