package admission

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Short invite codes: what `waitroom invites mint` hands out, made to be
// read aloud, typed on a phone and pasted from an e-mail. A short code is
// 15 bytes, a 7-byte code id and an 8-byte MAC, written as 24 characters
// of Crockford's base32 in six groups of four:
//
//	7KQ2-M9XA-3D0F-PT4W-E8NR-C1VB
//
// The id is random; the code the engine records as used is its 14 lower
// case hex digits. The MAC is the first 8 bytes of
// HMAC-SHA256(secret, "wr-invite-short\x00" event "\x00" id), so a short
// code is bound to its event and lane (by the lane's invite secret) like
// the long form of MakeInvite, and nobody without the secret can make one:
// guessing one takes 2^64 tries, and the proxy rate-limits wrong codes.
//
// Reading one is forgiving (NormalizeInvite): upper or lower case, any
// white space or dashes, and the letters Crockford's alphabet leaves out
// for looking like digits (O for 0, I and L for 1).

// Sizes of a short invite code.
const (
	// ShortInviteIDLen is the length of a short code's random id.
	ShortInviteIDLen = 7
	// shortMACLen is the length of a short code's MAC.
	shortMACLen = 8
	// shortInviteChars is the length of a short code without dashes.
	shortInviteChars = (ShortInviteIDLen + shortMACLen) * 8 / 5
	// maxInviteInput bounds what NormalizeInvite reads: a pasted code
	// with generous white space, no more.
	maxInviteInput = 4 * maxInviteLen
)

// shortDomain separates short-code MACs from every other credential MAC.
const shortDomain = "wr-invite-short\x00"

// crockford is Crockford's base32 alphabet.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValue maps a character (either case, with the lookalikes O, I
// and L) to its value, or 0xff.
var crockfordValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(crockford); i++ {
		c := crockford[i]
		t[c] = byte(i)
		if c >= 'A' && c <= 'Z' {
			t[c+'a'-'A'] = byte(i)
		}
	}
	t['O'], t['o'] = 0, 0
	t['I'], t['i'], t['L'], t['l'] = 1, 1, 1, 1
	return t
}()

// MakeShortInvite returns the short invite code of id for event, signed
// with the lane's invite secret (see the comment on short codes above).
// ShortInviteID gives the code the engine records for it.
func MakeShortInvite(secret []byte, event string, id [ShortInviteIDLen]byte) string {
	var raw [ShortInviteIDLen + shortMACLen]byte
	copy(raw[:], id[:])
	copy(raw[ShortInviteIDLen:], shortMAC(secret, event, id))
	var b strings.Builder
	b.Grow(shortInviteChars + shortInviteChars/4)
	// 120 bits, 5 at a time, most significant first.
	var acc uint64
	bits, n := 0, 0
	for _, x := range raw {
		acc = acc<<8 | uint64(x)
		bits += 8
		for bits >= 5 {
			bits -= 5
			if n > 0 && n%4 == 0 {
				b.WriteByte('-')
			}
			b.WriteByte(crockford[(acc>>bits)&31])
			n++
		}
	}
	return b.String()
}

// ShortInviteID is the code the engine records as used for the short
// invite of id: 14 lower-case hex digits.
func ShortInviteID(id [ShortInviteIDLen]byte) string { return hex.EncodeToString(id[:]) }

// NormalizeInvite reads an invite as a visitor typed or pasted it. A
// short code (24 base32 characters once white space and dashes are
// dropped, in either case, O read as 0 and I or L as 1) comes back in its
// canonical form, upper case in groups of four; anything else comes back
// without its white space (a long invite of MakeInvite broken across lines
// by a mail program), for ParseInvite to judge. ok is false for an input
// that can be neither: empty, or longer than any invite pasted with
// white space.
func NormalizeInvite(s string) (norm string, ok bool) {
	if len(s) > maxInviteInput {
		return "", false
	}
	var buf [shortInviteChars]byte
	n, short := 0, true
	for i := 0; i < len(s) && short; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '-':
		case crockfordValue[c] != 0xff && n < len(buf):
			buf[n] = crockford[crockfordValue[c]]
			n++
		default:
			short = false
		}
	}
	if short && n == shortInviteChars {
		var b strings.Builder
		b.Grow(shortInviteChars + shortInviteChars/4)
		for i := 0; i < n; i++ {
			if i > 0 && i%4 == 0 {
				b.WriteByte('-')
			}
			b.WriteByte(buf[i])
		}
		return b.String(), true
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			out = append(out, c)
		}
	}
	return string(out), len(out) > 0
}

// parseShortInvite decodes a canonical short code (as NormalizeInvite
// writes it) and checks its MAC. ok is false when s is not a short code
// at all; err is set when it is one but does not verify.
func parseShortInvite(secret []byte, event, s string) (code string, isShort bool, err error) {
	if len(s) != shortInviteChars+shortInviteChars/4-1 {
		return "", false, nil
	}
	var raw [ShortInviteIDLen + shortMACLen]byte
	var acc uint64
	bits, j := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i%5 == 4 {
			if c != '-' {
				return "", false, nil
			}
			continue
		}
		v := crockfordValue[c]
		if v == 0xff || crockford[v] != c { // canonical characters only
			return "", false, nil
		}
		acc = acc<<5 | uint64(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			raw[j] = byte(acc >> bits)
			j++
		}
	}
	if len(secret) == 0 {
		return "", true, errInviteSecret
	}
	var id [ShortInviteIDLen]byte
	copy(id[:], raw[:ShortInviteIDLen])
	if !hmac.Equal(raw[ShortInviteIDLen:], shortMAC(secret, event, id)) {
		return "", true, errInviteMAC
	}
	return ShortInviteID(id), true, nil
}

// shortMAC is the truncated MAC of a short code.
func shortMAC(secret []byte, event string, id [ShortInviteIDLen]byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(shortDomain))
	m.Write([]byte(event))
	m.Write([]byte{0})
	m.Write(id[:])
	return m.Sum(nil)[:shortMACLen]
}
