package admission

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token claim values and limits.
const (
	typTicket = "wr_ticket"
	typPass   = "wr_pass"

	// maxTokenLen bounds a token before it is parsed; SignTicket and
	// SignPass refuse to make longer ones.
	maxTokenLen = 4 << 10
	// maxHeaderLen bounds the encoded JWT header read to find the kid.
	maxHeaderLen = 512
	// maxLaneLen bounds a lane name in a token (bytes).
	maxLaneLen = 64
	// maxPassIDLen bounds a pass id (jti) in a token.
	maxPassIDLen = 64
	// maxKeyIDLen bounds a key id (kid).
	maxKeyIDLen = 64
	// minSecretLen is the least HS256 secret length (bytes).
	minSecretLen = 32
	// iatSkew is how far in the future a token's iat may be (clock skew
	// between replicas); exp has no leeway.
	iatSkew = 5 // seconds
	// maxUnix is the last second of year 9999: iat and exp beyond it are
	// malformed.
	maxUnix = 253402300799
)

// Ticket is the queue cookie's content: who joined which lane of which
// event in which tranche, and (once drawn) their queue number. Times are
// kept to the second in a token.
type Ticket struct {
	Event   string    // event id
	Visitor VisitorID // minted at join
	Lane    string    // lane name, 1 to 64 bytes
	Tranche int       // ≥ 0; 0 is the pre-queue
	Number  uint64    // queue number; 0 until drawn
	Binding string    // device-binding hash ("" when not bound)
	// IssuedAt and ExpiresAt bound the ticket's validity (whole seconds,
	// ExpiresAt at least a second after IssuedAt).
	IssuedAt, ExpiresAt time.Time
	// PromisedBy is the latest time the visitor was first told their
	// turn would come (the join's ETA high, whole seconds; the "eh"
	// claim); zero when no ETA was shown at the join. When the visitor
	// is admitted the engine counts whether the promise was kept
	// (Minute.ETAKept), without a store lookup.
	PromisedBy time.Time
}

// Pass is the admission cookie's content: a visitor admitted to an event,
// until ExpiresAt. Times are kept to the second in a token.
type Pass struct {
	ID      string    // pass id (jti), from NewPassID; for revocation
	Event   string    // event id
	Visitor VisitorID // the admitted visitor
	Lane    string    // the lane they were admitted from, 1 to 64 bytes
	Number  uint64    // their queue number
	Binding string    // device-binding hash ("" when not bound)
	// IssuedAt and ExpiresAt bound the pass's validity (whole seconds,
	// ExpiresAt at least a second after IssuedAt).
	IssuedAt, ExpiresAt time.Time
	// AdmittedAt is when the visitor's session began (the "adm" claim):
	// renewals keep it, and a session ends at AdmittedAt plus the event's
	// MaxSession whatever renewals happen. Zero for a pass minted before
	// renewal existed; such a pass is honoured until it expires but never
	// renewed. It is not after IssuedAt.
	AdmittedAt time.Time
}

// NewPassID returns a fresh pass id: 128 random bits, base64url without
// padding (22 characters).
func NewPassID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("admission: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// NewPassIDFor returns a fresh pass id for visitor v: the visitor id in
// hex (32 characters) then 128 random bits in base64url (22), so that an
// operator revoking a pass by its id can bar its visitor (PassVisitor).
// The id tells nothing the pass's vid claim does not.
func NewPassIDFor(v VisitorID) string {
	return v.String() + NewPassID()
}

// PassVisitor returns the visitor a pass id from NewPassIDFor names; ok
// is false for any other string (a NewPassID id among them).
func PassVisitor(passID string) (VisitorID, bool) {
	if len(passID) != 2*len(VisitorID{})+22 {
		return VisitorID{}, false
	}
	v, err := ParseVisitorID(passID[:2*len(VisitorID{})])
	if err != nil || v.String() != passID[:2*len(VisitorID{})] {
		return VisitorID{}, false // upper-case hex is not ours
	}
	return v, true
}

// ticketJSON is a ticket's JWT payload as signed; the JSON names are a
// contract.
type ticketJSON struct {
	Typ  string     `json:"typ"`
	Ev   string     `json:"ev"`
	Vid  hexVisitor `json:"vid"`
	Lane string     `json:"lane"`
	Tr   int        `json:"tr"`
	Num  uint64     `json:"num"`
	Bind string     `json:"bind"`
	Iat  int64      `json:"iat"`
	Exp  int64      `json:"exp"`
	Eh   int64      `json:"eh,omitempty"`
}

// passJSON is a pass's JWT payload as signed; the JSON names are a
// contract.
type passJSON struct {
	Typ  string     `json:"typ"`
	Jti  string     `json:"jti"`
	Ev   string     `json:"ev"`
	Vid  hexVisitor `json:"vid"`
	Lane string     `json:"lane"`
	Num  uint64     `json:"num"`
	Bind string     `json:"bind"`
	Iat  int64      `json:"iat"`
	Exp  int64      `json:"exp"`
	Adm  int64      `json:"adm,omitempty"`
}

// hexVisitor is a visitor id encoded as the vid claim (lower-case hex).
type hexVisitor VisitorID

// MarshalText implements encoding.TextMarshaler.
func (v hexVisitor) MarshalText() ([]byte, error) {
	b := make([]byte, 2*len(v))
	hex.Encode(b, v[:])
	return b, nil
}

// Verification failures that need no detail: built once, so rejecting
// garbage allocates nothing.
var (
	errTooLong       = fmt.Errorf("%w: longer than %d bytes", ErrBadToken, maxTokenLen)
	errMalformed     = fmt.Errorf("%w: malformed", ErrBadToken)
	errNoKid         = fmt.Errorf("%w: no key id", ErrBadToken)
	errUnknownKid    = fmt.Errorf("%w: unknown key id", ErrBadToken)
	errAlgMismatch   = fmt.Errorf("%w: algorithm does not match the key", ErrBadToken)
	errKidMismatch   = fmt.Errorf("%w: key id does not match the key", ErrBadToken)
	errWrongType     = fmt.Errorf("%w: wrong token type", ErrBadToken)
	errMissingClaim  = fmt.Errorf("%w: missing or unexpected claim", ErrBadToken)
	errBadEvent      = fmt.Errorf("%w: bad event claim", ErrBadToken)
	errBadLane       = fmt.Errorf("%w: bad lane claim", ErrBadToken)
	errBadTranche    = fmt.Errorf("%w: bad tranche claim", ErrBadToken)
	errBadPassID     = fmt.Errorf("%w: bad pass id claim", ErrBadToken)
	errBadBinding    = fmt.Errorf("%w: bad binding claim", ErrBadToken)
	errBadTimes      = fmt.Errorf("%w: bad iat or exp claim", ErrBadToken)
	errIssuedFuture  = fmt.Errorf("%w: issued in the future", ErrBadToken)
	errSignedTooLong = fmt.Errorf("%w: signed token longer than %d bytes", ErrBadToken, maxTokenLen)
	errNoSigningKey  = errors.New("admission: keyring cannot sign")
)

// SignTicket signs t with the signing key. It refuses (with an error
// wrapping ErrBadToken) a ticket that would not verify: empty event, lane
// empty or longer than 64 bytes, negative tranche, a string that is not
// valid UTF-8, IssuedAt before 1970-01-01T00:00:01Z, ExpiresAt after year
// 9999 or not at least a second after IssuedAt, or a token longer than
// 4 KiB. Times are truncated to the second.
func (k *Keyring) SignTicket(t Ticket) (string, error) {
	c := claims{
		typ: typTicket, ev: t.Event, vid: t.Visitor, lane: t.Lane, tr: t.Tranche,
		num: t.Number, bind: t.Binding, iat: t.IssuedAt.Unix(), exp: t.ExpiresAt.Unix(),
		seen: ticketClaimSet,
	}
	if !t.PromisedBy.IsZero() {
		c.eh, c.seen = t.PromisedBy.Unix(), c.seen|claimEh
	}
	if err := c.checkSignable(); err != nil {
		return "", err
	}
	return k.sign(&ticketJSON{
		Typ: typTicket, Ev: c.ev, Vid: hexVisitor(c.vid), Lane: c.lane, Tr: c.tr,
		Num: c.num, Bind: c.bind, Iat: c.iat, Exp: c.exp, Eh: c.eh,
	})
}

// SignPass signs p with the signing key. Besides the conditions of
// SignTicket, it refuses an ID that is empty, longer than 64 bytes or not
// made of base64url characters, and an AdmittedAt (when set) before
// 1970-01-01T00:00:01Z or after IssuedAt.
func (k *Keyring) SignPass(p Pass) (string, error) {
	c := claims{
		typ: typPass, jti: p.ID, ev: p.Event, vid: p.Visitor, lane: p.Lane,
		num: p.Number, bind: p.Binding, iat: p.IssuedAt.Unix(), exp: p.ExpiresAt.Unix(),
		seen: passClaimSet,
	}
	if !p.AdmittedAt.IsZero() {
		c.adm, c.seen = p.AdmittedAt.Unix(), c.seen|claimAdm
	}
	if err := c.checkSignable(); err != nil {
		return "", err
	}
	return k.sign(&passJSON{
		Typ: typPass, Jti: c.jti, Ev: c.ev, Vid: hexVisitor(c.vid), Lane: c.lane,
		Num: c.num, Bind: c.bind, Iat: c.iat, Exp: c.exp, Adm: c.adm,
	})
}

// sign encodes a payload under the signing key's header and signs it.
func (k *Keyring) sign(payload any) (string, error) {
	e := k.signer
	if e == nil || e.signKey == nil {
		return "", errNoSigningKey
	}
	js, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("admission: encode claims: %w", err)
	}
	enc := base64.RawURLEncoding
	var b strings.Builder
	b.Grow(len(e.header) + 2 + enc.EncodedLen(len(js)) + enc.EncodedLen(ed25519.SignatureSize))
	b.WriteString(e.header)
	b.WriteByte('.')
	b.WriteString(enc.EncodeToString(js))
	sig, err := e.method.Sign(b.String(), e.signKey)
	if err != nil {
		return "", fmt.Errorf("admission: sign token: %w", err)
	}
	b.WriteByte('.')
	b.WriteString(enc.EncodeToString(sig))
	if b.Len() > maxTokenLen {
		return "", errSignedTooLong
	}
	return b.String(), nil
}

// VerifyTicket checks a ticket token and returns its ticket. The token
// must be signed by a key of the keyring with that key's algorithm, be a
// ticket (not a pass), have well-formed claims, be issued no later than
// now + 5 s, expire after now, be for event and carry binding.
//
// Errors: ErrWrongEvent, ErrExpiredToken, ErrWrongBinding, and an error
// wrapping ErrBadToken (with the reason) for everything else.
func (k *Keyring) VerifyTicket(token, event, binding string, now time.Time) (Ticket, error) {
	c, err := k.verify(token, typTicket, event, binding, now)
	if err != nil {
		return Ticket{}, err
	}
	t := Ticket{
		Event:     c.ev,
		Visitor:   c.vid,
		Lane:      c.lane,
		Tranche:   c.tr,
		Number:    c.num,
		Binding:   c.bind,
		IssuedAt:  time.Unix(c.iat, 0).UTC(),
		ExpiresAt: time.Unix(c.exp, 0).UTC(),
	}
	if c.seen&claimEh != 0 {
		t.PromisedBy = time.Unix(c.eh, 0).UTC()
	}
	return t, nil
}

// VerifyPass checks a pass token and returns its pass, under the rules of
// VerifyTicket (a ticket is never a pass). It knows nothing of
// revocations.
func (k *Keyring) VerifyPass(token, event, binding string, now time.Time) (Pass, error) {
	c, err := k.verify(token, typPass, event, binding, now)
	if err != nil {
		return Pass{}, err
	}
	p := Pass{
		ID:        c.jti,
		Event:     c.ev,
		Visitor:   c.vid,
		Lane:      c.lane,
		Number:    c.num,
		Binding:   c.bind,
		IssuedAt:  time.Unix(c.iat, 0).UTC(),
		ExpiresAt: time.Unix(c.exp, 0).UTC(),
	}
	if c.seen&claimAdm != 0 {
		p.AdmittedAt = time.Unix(c.adm, 0).UTC()
	}
	return p, nil
}

// verify checks a token of type typ and returns its claims.
func (k *Keyring) verify(token, typ, event, binding string, now time.Time) (*claims, error) {
	e, err := k.lookup(token)
	if err != nil {
		return nil, err
	}
	c := new(claims)
	if _, err := e.parser.ParseWithClaims(token, c, e.keyfunc); err != nil {
		switch {
		case errors.Is(err, errAlgMismatch):
			return nil, errAlgMismatch
		case errors.Is(err, errKidMismatch):
			return nil, errKidMismatch
		}
		return nil, fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	if !c.decoded {
		return nil, errMalformed
	}
	if c.typ != typ {
		return nil, errWrongType
	}
	if err := c.checkShape(); err != nil {
		return nil, err
	}
	if c.ev != event {
		return nil, ErrWrongEvent
	}
	n := now.Unix()
	if c.iat > n+iatSkew {
		return nil, errIssuedFuture
	}
	if n >= c.exp {
		return nil, ErrExpiredToken
	}
	if subtle.ConstantTimeCompare([]byte(c.bind), []byte(binding)) != 1 {
		return nil, ErrWrongBinding
	}
	return c, nil
}

// The jwt.Claims methods. The parser does not validate claims (the Verify
// methods check times against their now); these only make claims a
// jwt.Claims.
