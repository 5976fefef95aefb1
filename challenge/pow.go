package challenge

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"
)

// Limits of a challenge's parameters.
const (
	// MinKeySize is the shortest PoW key NewPoW accepts, in bytes.
	MinKeySize = 32
	// MaxEventLen is the longest event id a challenge carries, in bytes.
	MaxEventLen = 64
	// MaxBits is the most leading zero bits a sub-puzzle can ask for.
	MaxBits = 32
	// MaxPuzzles is the most sub-puzzles a challenge can have.
	MaxPuzzles = 64
	// NonceLimit bounds nonces: each is below 2^53, so that a JavaScript
	// number carries it exactly.
	NonceLimit = 1 << 53
)

// The default work of a light and a heavy challenge (bot_defence's
// events[].challenge.light and .heavy).
const (
	// DefaultLightBits with DefaultPuzzles takes about a second in
	// headless Chromium on a 2-core machine with the page's WebAssembly
	// solver (16 M hashes; docs/bot-defence.md, Calibration).
	DefaultLightBits = 20
	// DefaultHeavyBits is 128 times the light work (7 bits more): a
	// suspicious client pays over 100 times what a fan does.
	DefaultHeavyBits = 27
	// DefaultPuzzles is the sub-puzzles of either.
	DefaultPuzzles = 16
)

// The token layout.
const (
	powVersion   = 0x02
	powDomain    = "waitroom/pow/v2\x00"
	powKeyLabel  = "waitroom/pow/v2 aes-256-gcm"
	powIDLen     = 16
	powTagLen    = 16
	powFixed     = 16 + 8 + 8 + 1 + 1 + 1 // binding to score
	powHead      = 1 + powIDLen           // version, id: in the clear
	powMinPlain  = 1 + 1 + powFixed
	powMaxPlain  = 1 + MaxEventLen + powFixed
	powMinRaw    = powHead + powMinPlain + powTagLen
	powMaxRaw    = powHead + powMaxPlain + powTagLen
	powMinToken  = (powMinRaw*8 + 5) / 6 // base64 without padding
	powMaxToken  = (powMaxRaw*8 + 5) / 6
	powScoreMax  = 100
	powSeedBytes = 16
)

// Errors of Verify and Redeem, for errors.Is. Their text is for logs, not
// for visitors.
var (
	// ErrMalformed: the token is not one PoW could have issued (bad
	// base64, wrong length or version, fields out of range).
	ErrMalformed = errors.New("challenge: malformed token")
	// ErrForged: the token does not open under this key (tampered with,
	// or sealed with another key).
	ErrForged = errors.New("challenge: token not sealed by this key")
	// ErrExpired: the challenge is past its expiry.
	ErrExpired = errors.New("challenge: challenge expired")
	// ErrWrongEvent: the challenge was issued for another event.
	ErrWrongEvent = errors.New("challenge: challenge issued for another event")
	// ErrWrongBinding: the challenge was issued to another device (its
	// binding differs).
	ErrWrongBinding = errors.New("challenge: challenge bound to another device")
	// ErrUnsolved: the nonces do not solve the challenge (wrong count, a
	// nonce of 2^53 or more, or a hash short of the zero bits).
	ErrUnsolved = errors.New("challenge: nonces do not solve the challenge")
	// ErrReplayed: the challenge was redeemed before.
	ErrReplayed = errors.New("challenge: challenge already redeemed")
)

// Challenge is one proof-of-work challenge, as issued and as verified.
type Challenge struct {
	// Event the challenge admits to: 1 to MaxEventLen bytes.
	Event string
	// Binding ties the challenge to a device (a hash the proxy computes).
	Binding [16]byte
	// IssuedAt and ExpiresAt, in UTC and whole seconds (the token stores
	// unix seconds); the challenge is valid while now is before ExpiresAt.
	IssuedAt, ExpiresAt time.Time
	// Bits is the number of leading zero bits each sub-puzzle's hash
	// needs, 1 to MaxBits.
	Bits uint8
	// Puzzles is K, the number of sub-puzzles, 1 to MaxPuzzles.
	Puzzles uint8
	// Score is the risk score (0 to 100) when the challenge was issued.
	// It is sealed in the token: only the server reads it.
	Score uint8
	// ID is random and identifies the challenge to the replay guard.
	ID [16]byte
	// Seed is what the sub-puzzles hash: the token's 16-byte GCM tag,
	// which no one without the key can choose or foresee. It is derived,
	// not encoded; Issue and Verify set it.
	Seed [16]byte
}

// SeedHex is c's seed in lower-case hex, as the page's solver takes it.
func SeedHex(c Challenge) string { return hex.EncodeToString(c.Seed[:]) }

// IssueParams describe a challenge to issue.
type IssueParams struct {
	// Event the challenge admits to: 1 to MaxEventLen bytes.
	Event string
	// Binding ties the challenge to the requesting device.
	Binding [16]byte
	// Bits (1 to MaxBits) and Puzzles (1 to MaxPuzzles) set the work:
	// Puzzles·2^Bits hashes on average.
	Bits, Puzzles uint8
	// Score is the risk score, 0 to 100, sealed for the join to use.
	Score uint8
	// TTL is how long the challenge stays valid (> 0). ExpiresAt is
	// Now+TTL rounded up to a whole second.
	TTL time.Duration
	// Now is the issue time; time.Now() when zero.
	Now time.Time
}

// PoW issues and verifies proof-of-work challenges under one key. It is
// safe for concurrent use.
//
// A challenge asks for K independent sub-puzzles (K = Puzzles). Each is
// solved by a nonce n, 0 <= n < 2^53, such that
//
//	SHA-256(seed (16 bytes) || uint32be(i) (4) || uint64be(n) (8))
//
// starts with at least Bits zero bits, where i is the sub-puzzle's index
// (0..K-1) and seed the token's GCM tag. The message is
// 28 bytes: one SHA-256 block.
//
// Expected work: a sub-puzzle takes a geometric number of hashes with
// mean 2^Bits and a standard deviation just under 2^Bits, so a challenge
// takes K·2^Bits hashes on average, with a relative spread (standard
// deviation over mean) of about 1/√K: ±25% for K=16, ±12.5% for K=64,
// where one puzzle of the same mean work would spread ±100% and leave
// some visitors waiting several times longer than others. Verification
// costs K hashes and one AES-GCM opening, whatever Bits is.
//
// The token is opaque to the client: all it needs (the seed, the bits,
// the puzzles and the expiry) the challenge answer gives it beside the
// token, and the rest, the risk score above all, is sealed, so that a
// client probing header, address and TLS combinations learns no more of
// its score than the work it is given. The token is, big endian, then
// base64url without padding:
//
//	version 0x02 (1) | id (16) | sealed (len(event) + 36) | tag (16)
//
// where sealed || tag is AES-256-GCM of
//
//	len(event) (1) | event | binding (16) | issued_at unix s (8) |
//	expires_at unix s (8) | bits (1) | puzzles (1) | score (1)
//
// under HMAC-SHA256(key, "waitroom/pow/v2 aes-256-gcm"), with the id's
// first 12 bytes as nonce and "waitroom/pow/v2\x00" || version || id as
// additional data. The id is random per challenge (so nonces never
// repeat under a key) and is what the replay guard remembers; the seed is
// the tag.
type PoW struct {
	guard ReplayGuard
	aead  cipher.AEAD // safe for concurrent use
	// states holds *powState: the buffers a verification and a
	// redemption need, so that they allocate nothing.
	states sync.Pool
}

// powState is one set of pooled buffers.
type powState struct {
	raw [powMaxRaw]byte
	pt  [powMaxPlain]byte
	ad  [len(powDomain) + powHead]byte
	tok [powMaxToken]byte
	id  [16]byte
}

// NewPoW returns a PoW signing with key (at least MinKeySize bytes, kept
// secret and shared by every replica) and redeeming through guard.
func NewPoW(key []byte, guard ReplayGuard) (*PoW, error) {
	if len(key) < MinKeySize {
		return nil, fmt.Errorf("challenge: the proof-of-work key must be at least %d bytes, got %d", MinKeySize, len(key))
	}
	if guard == nil {
		return nil, errors.New("challenge: a replay guard is required")
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(powKeyLabel))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("challenge: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("challenge: %w", err)
	}
	p := &PoW{guard: guard, aead: aead}
	p.states.New = func() any {
		s := &powState{}
		copy(s.ad[:], powDomain)
		return s
	}
	return p, nil
}

// Issue makes a challenge with a random ID and returns its token.
func (p *PoW) Issue(ip IssueParams) (token string, c Challenge, err error) {
	switch {
	case len(ip.Event) < 1 || len(ip.Event) > MaxEventLen:
		return "", Challenge{}, fmt.Errorf("challenge: the event must be 1 to %d bytes, got %d", MaxEventLen, len(ip.Event))
	case ip.Bits < 1 || ip.Bits > MaxBits:
		return "", Challenge{}, fmt.Errorf("challenge: bits must be 1 to %d, got %d", MaxBits, ip.Bits)
	case ip.Puzzles < 1 || ip.Puzzles > MaxPuzzles:
		return "", Challenge{}, fmt.Errorf("challenge: puzzles must be 1 to %d, got %d", MaxPuzzles, ip.Puzzles)
	case ip.Score > powScoreMax:
		return "", Challenge{}, fmt.Errorf("challenge: the score must be 0 to %d, got %d", powScoreMax, ip.Score)
	case ip.TTL <= 0:
		return "", Challenge{}, fmt.Errorf("challenge: the TTL must be positive, got %s", ip.TTL)
	}
	now := ip.Now
	if now.IsZero() {
		now = time.Now()
	}
	exp := now.Add(ip.TTL)
	expSec := exp.Unix()
	if exp.Nanosecond() != 0 {
		expSec++
	}
	c = Challenge{Event: ip.Event, Binding: ip.Binding, IssuedAt: time.Unix(now.Unix(), 0).UTC(),
		ExpiresAt: time.Unix(expSec, 0).UTC(), Bits: ip.Bits, Puzzles: ip.Puzzles, Score: ip.Score}
	rand.Read(c.ID[:]) // never fails (it crashes the program instead)
	token = p.encode(&c)
	return token, c, nil
}

// encode seals c, sets c.Seed and returns the token.
func (p *PoW) encode(c *Challenge) string {
	s := p.states.Get().(*powState)
	defer p.states.Put(s)
	pt := s.pt[:0]
	pt = append(pt, byte(len(c.Event)))
	pt = append(pt, c.Event...)
	pt = append(pt, c.Binding[:]...)
	pt = binary.BigEndian.AppendUint64(pt, uint64(c.IssuedAt.Unix()))
	pt = binary.BigEndian.AppendUint64(pt, uint64(c.ExpiresAt.Unix()))
	pt = append(pt, c.Bits, c.Puzzles, c.Score)
	raw := append(s.raw[:0], powVersion)
	raw = append(raw, c.ID[:]...)
	raw = p.aead.Seal(raw, c.ID[:p.aead.NonceSize()], pt, s.additional(&c.ID))
	copy(c.Seed[:], raw[len(raw)-powTagLen:])
	return base64.RawURLEncoding.EncodeToString(raw)
}

// additional returns the additional data sealed with a token of id.
func (s *powState) additional(id *[16]byte) []byte {
	s.ad[len(powDomain)] = powVersion
	copy(s.ad[len(powDomain)+1:], id[:])
	return s.ad[:]
}

var strictBase64 = base64.RawURLEncoding.Strict()

// decode opens token into c (all but c.Event) and returns the event's
// bytes, which alias s.pt.
func (p *PoW) decode(s *powState, token string, c *Challenge) ([]byte, error) {
	if len(token) < powMinToken || len(token) > powMaxToken {
		return nil, ErrMalformed
	}
	nt := copy(s.tok[:], token)
	n, err := strictBase64.Decode(s.raw[:], s.tok[:nt])
	// Decode skips CR and LF: a token holding any re-encodes longer.
	if err != nil || (n*8+5)/6 != len(token) || n < powMinRaw {
		return nil, ErrMalformed
	}
	raw := s.raw[:n]
	if raw[0] != powVersion {
		return nil, ErrMalformed
	}
	// The nonce and the additional data are slices of s, not of c: what
	// goes to the AEAD interface escapes.
	copy(s.id[:], raw[1:powHead])
	pt, err := p.aead.Open(s.pt[:0], raw[1:1+p.aead.NonceSize()], raw[powHead:], s.additional(&s.id))
	if err != nil {
		return nil, ErrForged
	}
	el := int(pt[0])
	if len(pt) != 1+el+powFixed || el < 1 || el > MaxEventLen {
		return nil, ErrMalformed
	}
	c.ID = s.id
	ev := pt[1 : 1+el]
	f := pt[1+el:]
	copy(c.Binding[:], f[0:16])
	issued := int64(binary.BigEndian.Uint64(f[16:24]))
	expires := int64(binary.BigEndian.Uint64(f[24:32]))
	c.IssuedAt, c.ExpiresAt = time.Unix(issued, 0).UTC(), time.Unix(expires, 0).UTC()
	c.Bits, c.Puzzles, c.Score = f[32], f[33], f[34]
	copy(c.Seed[:], raw[n-powTagLen:])
	// Only a holder of the key could have sealed these: check anyway.
	if c.Bits < 1 || c.Bits > MaxBits || c.Puzzles < 1 || c.Puzzles > MaxPuzzles ||
		c.Score > powScoreMax || expires <= issued {
		*c = Challenge{}
		return nil, ErrMalformed
	}
	return ev, nil
}

// Verify checks a solution: token must be one of p's, for event and
// binding, not expired at now, and nonces must solve its sub-puzzles,
// nonces[i] solving sub-puzzle i. It does not redeem the challenge (see
// Redeem) and allocates nothing when the solution is good.
//
// The returned Challenge's Event is event. With ErrExpired,
// ErrWrongEvent, ErrWrongBinding and ErrUnsolved, which come only with
// an authentic token, the challenge is returned too (to log its score);
// with other errors it is zero.
func (p *PoW) Verify(token string, nonces []uint64, event string, binding [16]byte, now time.Time) (Challenge, error) {
	var c Challenge
	s := p.states.Get().(*powState)
	ev, err := p.decode(s, token, &c)
	if err != nil {
		p.states.Put(s)
		return Challenge{}, err
	}
	if string(ev) != event {
		c.Event = string(ev)
		p.states.Put(s)
		return c, ErrWrongEvent
	}
	p.states.Put(s)
	c.Event = event
	switch {
	case now.Unix() >= c.ExpiresAt.Unix():
		return c, ErrExpired
	case c.Binding != binding:
		return c, ErrWrongBinding
	case len(nonces) != int(c.Puzzles):
		return c, ErrUnsolved
	}
	for _, n := range nonces {
		if n >= NonceLimit {
			return c, ErrUnsolved
		}
	}
	var msg [28]byte
	copy(msg[:16], c.Seed[:])
	for i, n := range nonces {
		binary.BigEndian.PutUint32(msg[16:20], uint32(i))
		binary.BigEndian.PutUint64(msg[20:28], n)
		if !solves(&msg, c.Bits) {
			return c, ErrUnsolved
		}
	}
	return c, nil
}

// solves reports whether the hash of msg starts with bits zero bits
// (bits <= 32).
func solves(msg *[28]byte, nbits uint8) bool {
	h := sha256.Sum256(msg[:])
	return bits.LeadingZeros32(binary.BigEndian.Uint32(h[:4])) >= int(nbits)
}

// Redeem marks c used in the replay guard: it returns nil the first time
// and an error wrapping ErrReplayed after that; other errors are the
// guard's (its store unreachable). Call it after Verify succeeds.
func (p *PoW) Redeem(ctx context.Context, c Challenge) error {
	// The id goes to the guard from a pooled buffer: a slice handed to
	// an interface escapes, and guards keep no reference to it.
	s := p.states.Get().(*powState)
	s.id = c.ID
	ok, err := p.guard.Redeem(ctx, s.id[:], c.ExpiresAt)
	p.states.Put(s)
	switch {
	case err != nil:
		return fmt.Errorf("challenge: redeeming: %w", err)
	case !ok:
		return ErrReplayed
	}
	return nil
}

// Solve finds the nonces solving a challenge of seed, bits and puzzles:
// the answer Verify wants, nonces[i] being the smallest solving
// sub-puzzle i. It takes puzzles·2^bits hashes on average (see PoW), so
// it is for tests, benchmarks and tools, with small bits.
func Solve(seed [16]byte, nbits, puzzles uint8) []uint64 {
	out := make([]uint64, puzzles)
	var msg [28]byte
	copy(msg[:16], seed[:])
	for i := range out {
		binary.BigEndian.PutUint32(msg[16:20], uint32(i))
		for n := uint64(0); n < NonceLimit; n++ {
			binary.BigEndian.PutUint64(msg[20:28], n)
			if solves(&msg, nbits) {
				out[i] = n
				break
			}
		}
	}
	return out
}
