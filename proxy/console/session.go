package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// CookieName is the console's session cookie.
const CookieName = "wr_console"

// cookiePath scopes the session cookie to the console.
const cookiePath = "/admin/"

// A session cookie is base64url(payload) "." base64url(HMAC-SHA256(key,
// payload)), payload being the session id (16 random bytes) and its
// expiry (Unix seconds, 8 bytes big-endian). Nothing is stored server
// side but the ids logged out before their expiry.
const (
	sidLen     = 16
	payloadLen = sidLen + 8
)

// sessions signs and checks session cookies and the CSRF tokens bound to
// them. Safe for concurrent use.
type sessions struct {
	key   [sha256.Size]byte // derived from the admin token
	token [sha256.Size]byte // SHA-256 of the admin token
	ttl   time.Duration
	now   func() time.Time

	mu     sync.Mutex
	ended  map[[sidLen]byte]time.Time // logged out → its expiry
	sweepN int
}

// session is a valid, signed-in session.
type session struct {
	id      [sidLen]byte
	expires time.Time
}

func newSessions(token string, ttl time.Duration, now func() time.Time) *sessions {
	s := &sessions{token: sha256.Sum256([]byte(token)), ttl: ttl, now: now, ended: map[[sidLen]byte]time.Time{}}
	// The key is the token's own HMAC: every replica with the same token
	// accepts the others' sessions, and a new token ends them all.
	m := hmac.New(sha256.New, s.token[:])
	m.Write([]byte("waitroom console session v1"))
	copy(s.key[:], m.Sum(nil))
	return s
}

// tokenOK compares a submitted admin token in constant time.
func (s *sessions) tokenOK(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

func (s *sessions) mac(b []byte) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(b)
	return m.Sum(nil)
}

// issue starts a session and returns its cookie value.
func (s *sessions) issue() (string, session) {
	var ss session
	_, _ = rand.Read(ss.id[:]) // never fails (crypto/rand)
	ss.expires = s.now().Add(s.ttl).Truncate(time.Second)
	return s.encode(ss), ss
}

// encode is a session's cookie value.
func (s *sessions) encode(ss session) string {
	var p [payloadLen]byte
	copy(p[:], ss.id[:])
	binary.BigEndian.PutUint64(p[sidLen:], uint64(ss.expires.Unix()))
	enc := base64.RawURLEncoding
	return enc.EncodeToString(p[:]) + "." + enc.EncodeToString(s.mac(p[:]))
}

// parse checks a cookie value: well formed, signed by us, not expired,
// not logged out.
func (s *sessions) parse(v string) (session, bool) {
	enc := base64.RawURLEncoding
	a, b, ok := strings.Cut(v, ".")
	if !ok || len(a) != enc.EncodedLen(payloadLen) || len(b) != enc.EncodedLen(sha256.Size) {
		return session{}, false
	}
	var p [payloadLen]byte
	var sig [sha256.Size]byte
	if n, err := enc.Decode(p[:], []byte(a)); err != nil || n != payloadLen {
		return session{}, false
	}
	if n, err := enc.Decode(sig[:], []byte(b)); err != nil || n != sha256.Size {
		return session{}, false
	}
	if !hmac.Equal(sig[:], s.mac(p[:])) {
		return session{}, false
	}
	var ss session
	copy(ss.id[:], p[:sidLen])
	ss.expires = time.Unix(int64(binary.BigEndian.Uint64(p[sidLen:])), 0)
	if !s.now().Before(ss.expires) {
		return session{}, false
	}
	s.mu.Lock()
	_, ended := s.ended[ss.id]
	s.mu.Unlock()
	return ss, !ended
}

// end logs a session out: its cookie stops working here even if a copy
// is replayed before it expires.
func (s *sessions) end(ss session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended[ss.id] = ss.expires
	if s.sweepN++; s.sweepN >= 64 {
		s.sweepN = 0
		now := s.now()
		for id, exp := range s.ended {
			if !now.Before(exp) {
				delete(s.ended, id)
			}
		}
	}
}

// csrf is the session's CSRF token: an HMAC of its id, so it needs no
// storage and dies with the session.
func (s *sessions) csrf(ss session) string {
	return hex.EncodeToString(s.mac(append([]byte("csrf:"), ss.id[:]...)))
}

// csrfOK checks a submitted CSRF token against the session's.
func (s *sessions) csrfOK(ss session, tok string) bool {
	want := s.csrf(ss)
	return len(tok) == len(want) && subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1
}

// fromRequest returns the request's session, if it carries a valid one.
func (s *sessions) fromRequest(r *http.Request) (session, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return session{}, false
	}
	return s.parse(c.Value)
}

// cookie is the session cookie to set (value "" and maxAge < 0: clear it).
// It is Secure when the request came over TLS.
func cookie(r *http.Request, value string, expires time.Time, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: cookiePath, Expires: expires, MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
}
