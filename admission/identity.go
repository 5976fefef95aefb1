package admission

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The signed identity: how an origin that shares a secret with waitroom
// tells it who is logged in, in a cookie or a header it sets on its own
// domain. Its conventions are those of invites and account proofs
// (base64url without padding, a MAC of HMAC-SHA256 cut to 16 bytes,
// NUL-separated fields behind a domain prefix), its own domain prefix
// keeping one kind of MAC from passing for another.

// identityDomain prefixes an identity's MAC.
const identityDomain = "wr-identity\x00"

// MaxAccountLen bounds an account id (bytes), in a signed identity as in
// a presale credential.
const MaxAccountLen = maxInviteField

// maxIdentityLen bounds a whole signed identity (bytes).
const maxIdentityLen = 512

// Identity failures, built once. All wrap ErrBadCredential.
var (
	errIdentityLong    = fmt.Errorf("%w: identity longer than %d bytes", ErrBadCredential, maxIdentityLen)
	errIdentityShape   = fmt.Errorf("%w: identity is not account.expiry.mac", ErrBadCredential)
	errIdentityAccount = fmt.Errorf("%w: identity account malformed", ErrBadCredential)
	errIdentityMAC     = fmt.Errorf("%w: identity signature does not match", ErrBadCredential)
	errIdentitySecret  = fmt.Errorf("%w: no identity secret", ErrBadCredential)
	// ErrIdentityExpired is a signed identity whose expiry has passed.
	ErrIdentityExpired = fmt.Errorf("%w: identity expired", ErrBadCredential)
)

// MakeIdentity returns the signed identity of account until expires:
//
//	base64url(account) "." expiry "." base64url(mac)
//
// where expiry is expires in whole Unix seconds (decimal, no sign, no
// leading zeros) and mac is the first 16 bytes of HMAC-SHA256(secret,
// "wr-identity\x00" account "\x00" expiry), base64url without padding.
// The origin sets it (in the cookie or header waitroom is configured to
// read) for its logged-in user; waitroom checks it with ParseIdentity.
//
// account must be 1 to 128 bytes without a NUL byte, expires after 1970
// and secret not empty: otherwise the identity made is one ParseIdentity
// rejects.
func MakeIdentity(secret []byte, account string, expires time.Time) string {
	exp := strconv.FormatInt(max(expires.Unix(), 0), 10)
	var b strings.Builder
	b.Grow(strictB64.EncodedLen(len(account)) + len(exp) + strictB64.EncodedLen(credentialMACLen) + 2)
	b.WriteString(strictB64.EncodeToString([]byte(account)))
	b.WriteByte('.')
	b.WriteString(exp)
	b.WriteByte('.')
	b.WriteString(strictB64.EncodeToString(identityMAC(secret, account, exp)))
	return b.String()
}

// ParseIdentity checks a signed identity made by MakeIdentity with secret
// and returns its account. An identity expired at now (ErrIdentityExpired),
// of another secret, altered in any way or malformed is rejected with an
// error wrapping ErrBadCredential. One identity has one spelling.
func ParseIdentity(secret []byte, identity string, now time.Time) (string, error) {
	if len(secret) == 0 {
		return "", errIdentitySecret
	}
	if len(identity) > maxIdentityLen {
		return "", errIdentityLong
	}
	a64, rest, ok1 := strings.Cut(identity, ".")
	exp, m64, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.IndexByte(m64, '.') >= 0 {
		return "", errIdentityShape
	}
	if strictB64.DecodedLen(len(m64)) != credentialMACLen || strictB64.DecodedLen(len(a64)) > MaxAccountLen {
		return "", errIdentityShape
	}
	// Canonical decimal: digits only, no leading zero (but "0").
	if exp == "" || len(exp) > 19 || (len(exp) > 1 && exp[0] == '0') || strings.Trim(exp, "0123456789") != "" {
		return "", errIdentityShape
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", errIdentityShape
	}
	var mac [credentialMACLen]byte
	if n, err := strictB64.Decode(mac[:], []byte(m64)); err != nil || n != credentialMACLen {
		return "", errIdentityShape
	}
	accountB, err := strictB64.DecodeString(a64)
	if err != nil {
		return "", errIdentityShape
	}
	if len(accountB) == 0 || len(accountB) > MaxAccountLen || bytes.IndexByte(accountB, 0) >= 0 {
		return "", errIdentityAccount
	}
	account := string(accountB)
	if !hmac.Equal(mac[:], identityMAC(secret, account, exp)) {
		return "", errIdentityMAC
	}
	if now.Unix() >= secs {
		return "", ErrIdentityExpired
	}
	return account, nil
}

// identityMAC is the truncated MAC of a signed identity.
func identityMAC(secret []byte, account, expiry string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(identityDomain))
	m.Write([]byte(account))
	m.Write([]byte{0})
	m.Write([]byte(expiry))
	return m.Sum(nil)[:credentialMACLen]
}
