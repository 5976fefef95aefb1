package admission

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// Invite code limits.
const (
	// maxInviteField bounds an invite's code and account (bytes).
	maxInviteField = 128
	// maxInviteLen bounds a whole invite (bytes).
	maxInviteLen = 512
	// credentialMACLen is how much of HMAC-SHA256 invites and account
	// proofs keep (bytes).
	credentialMACLen = 16
)

// Domain prefixes of the credential MACs: an invite MAC is never an
// account proof and vice versa.
const (
	inviteDomain  = "wr-invite\x00"
	accountDomain = "wr-account\x00"
)

// strictB64 rejects non-canonical encodings, so one credential has one
// spelling.
var strictB64 = base64.RawURLEncoding.Strict()

// Invite failures, built once.
var (
	errInviteLong   = fmt.Errorf("%w: invite longer than %d bytes", ErrBadCredential, maxInviteLen)
	errInviteShape  = fmt.Errorf("%w: invite is not code.account.mac", ErrBadCredential)
	errInviteField  = fmt.Errorf("%w: invite code or account malformed", ErrBadCredential)
	errInviteMAC    = fmt.Errorf("%w: invite signature does not match", ErrBadCredential)
	errInviteSecret = fmt.Errorf("%w: no invite secret", ErrBadCredential)
	errInviteEvent  = fmt.Errorf("%w: malformed event id", ErrBadCredential)
)

// MakeInvite returns the invite for code in event, bound to account ("":
// anyone holding it may use it):
//
//	base64url(code) "." base64url(account) "." base64url(mac)
//
// where mac is the first 16 bytes of HMAC-SHA256(secret, "wr-invite\x00"
// event "\x00" code "\x00" account), base64url without padding. Each code
// admits once (the engine records its use).
//
// code must be 1 to 128 bytes, account at most 128 bytes, neither may
// contain a NUL byte, and secret must not be empty: otherwise the invite
// made is one ParseInvite rejects.
func MakeInvite(secret []byte, event, code, account string) string {
	var b strings.Builder
	b.Grow(strictB64.EncodedLen(len(code)) + strictB64.EncodedLen(len(account)) + strictB64.EncodedLen(credentialMACLen) + 2)
	b.WriteString(strictB64.EncodeToString([]byte(code)))
	b.WriteByte('.')
	b.WriteString(strictB64.EncodeToString([]byte(account)))
	b.WriteByte('.')
	b.WriteString(strictB64.EncodeToString(inviteMAC(secret, event, code, account)))
	return b.String()
}

// ParseInvite checks an invite made by MakeInvite (or a short code of
// MakeShortInvite, in its canonical form) with secret for event and
// returns its code and the account it is bound to ("" when unbound). An
// invite of another event, another secret, altered in any way or
// malformed is rejected with an error wrapping ErrBadCredential. Whether
// the code was used already is the engine's business.
func ParseInvite(secret []byte, event, invite string) (code, account string, err error) {
	if len(secret) == 0 {
		return "", "", errInviteSecret
	}
	if strings.IndexByte(event, 0) >= 0 {
		return "", "", errInviteEvent
	}
	if code, short, err := parseShortInvite(secret, event, invite); short {
		return code, "", err
	}
	if len(invite) > maxInviteLen {
		return "", "", errInviteLong
	}
	c64, rest, ok1 := strings.Cut(invite, ".")
	a64, m64, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.IndexByte(m64, '.') >= 0 {
		return "", "", errInviteShape
	}
	if strictB64.DecodedLen(len(m64)) != credentialMACLen ||
		strictB64.DecodedLen(len(c64)) > maxInviteField ||
		strictB64.DecodedLen(len(a64)) > maxInviteField {
		return "", "", errInviteField
	}
	var mac [credentialMACLen]byte
	if n, err := strictB64.Decode(mac[:], []byte(m64)); err != nil || n != credentialMACLen {
		return "", "", errInviteShape
	}
	codeB, err := strictB64.DecodeString(c64)
	if err != nil {
		return "", "", errInviteShape
	}
	accountB, err := strictB64.DecodeString(a64)
	if err != nil {
		return "", "", errInviteShape
	}
	// NUL separates the MAC's fields: refusing it in code and account
	// keeps the MAC input unambiguous ("a\x00b" + "" vs "a" + "b\x00").
	if len(codeB) == 0 || len(codeB) > maxInviteField || len(accountB) > maxInviteField ||
		bytes.IndexByte(codeB, 0) >= 0 || bytes.IndexByte(accountB, 0) >= 0 {
		return "", "", errInviteField
	}
	code, account = string(codeB), string(accountB)
	if !hmac.Equal(mac[:], inviteMAC(secret, event, code, account)) {
		return "", "", errInviteMAC
	}
	return code, account, nil
}

// MakeAccountProof returns the proof that the origin vouches for account
// in event: base64url (no padding) of the first 16 bytes of
// HMAC-SHA256(secret, "wr-account\x00" event "\x00" account). The origin
// computes it with the lane's account secret and hands it to its signed-in
// user.
func MakeAccountProof(secret []byte, event, account string) string {
	return strictB64.EncodeToString(accountMAC(secret, event, account))
}

// CheckAccountProof reports whether proof is MakeAccountProof(secret,
// event, account), in constant time. An empty secret or account, an
// account longer than 128 bytes or an event containing a NUL byte never
// checks.
func CheckAccountProof(secret []byte, event, account, proof string) bool {
	if len(secret) == 0 || account == "" || len(account) > maxInviteField ||
		strings.IndexByte(event, 0) >= 0 ||
		strictB64.DecodedLen(len(proof)) != credentialMACLen {
		return false
	}
	var mac [credentialMACLen]byte
	if n, err := strictB64.Decode(mac[:], []byte(proof)); err != nil || n != credentialMACLen {
		return false
	}
	return hmac.Equal(mac[:], accountMAC(secret, event, account))
}

// inviteMAC is the truncated MAC of an invite.
func inviteMAC(secret []byte, event, code, account string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(inviteDomain))
	m.Write([]byte(event))
	m.Write([]byte{0})
	m.Write([]byte(code))
	m.Write([]byte{0})
	m.Write([]byte(account))
	return m.Sum(nil)[:credentialMACLen]
}

// accountMAC is the truncated MAC of an account proof.
func accountMAC(secret []byte, event, account string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(accountDomain))
	m.Write([]byte(event))
	m.Write([]byte{0})
	m.Write([]byte(account))
	return m.Sum(nil)[:credentialMACLen]
}
