package admission

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// Token algorithms a Key may use.
const (
	algHS256 = "HS256" // HMAC-SHA256 with a shared secret
	algEdDSA = "EdDSA" // Ed25519 (RFC 8037)
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

// Key is one token key of a Keyring: a shared secret (HS256) or an
// Ed25519 key pair (EdDSA). NewKeyring copies what it keeps, so a Key may
// be reused or zeroed after the call.
type Key struct {
	// ID is the key id, the JWT header's kid: non-empty, at most 64 bytes,
	// unique within a Keyring.
	ID string
	// Alg is "HS256" or "EdDSA".
	Alg string
	// Secret is the HS256 shared secret, at least 32 bytes.
	Secret []byte
	// Private is the EdDSA signing key; nil for a verification-only key.
	Private ed25519.PrivateKey
	// Public is the EdDSA verification key; derived from Private when nil
	// (and, when both are set, it must be Private's public key).
	Public ed25519.PublicKey
}

// Keyring signs tickets and passes with one key and verifies them with
// any of its keys (the signing key and the verification keys), which makes
// key rotation possible: add the new key as the signing key and keep the
// old one as a verification key until the tokens it signed have expired.
//
// A token's kid selects the key and the key fixes the algorithm: a token
// whose header names another algorithm (alg "none", HS256 with an EdDSA
// key's kid, ...) is rejected.
//
// A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	signer   *keyEntry
	keys     []*keyEntry          // signing key first, then verification keys in order
	byID     map[string]*keyEntry // kid → key
	byHeader map[string]*keyEntry // canonical encoded header → key (fast path)
}

// keyEntry is a validated key with everything verification needs built
// once: no allocation to select a key on the hot path.
type keyEntry struct {
	id        string
	alg       string
	method    jwt.SigningMethod
	signKey   any // []byte (HS256) or ed25519.PrivateKey; nil: verification only
	verifyKey any // []byte (HS256) or ed25519.PublicKey
	public    ed25519.PublicKey
	header    string      // base64url of the header SignTicket and SignPass write
	parser    *jwt.Parser // accepts exactly this key's algorithm
	keyfunc   jwt.Keyfunc
}

// NewKeyring returns a keyring that signs with signing and verifies with
// signing and every key of verify. Every key is validated (algorithm, key
// sizes, a private key consistent with its public key) and key ids must
// be unique; all problems are reported together. The signing key must be
// able to sign (a secret, or an Ed25519 private key).
func NewKeyring(signing Key, verify ...Key) (*Keyring, error) {
	k := &Keyring{
		byID:     make(map[string]*keyEntry, 1+len(verify)),
		byHeader: make(map[string]*keyEntry, 1+len(verify)),
	}
	var errs []error
	all := append([]Key{signing}, verify...)
	for i, key := range all {
		e, err := newKeyEntry(key, i == 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := k.byID[e.id]; dup {
			errs = append(errs, fmt.Errorf("admission: key %q: duplicate key id", e.id))
			continue
		}
		k.byID[e.id] = e
		k.byHeader[e.header] = e
		k.keys = append(k.keys, e)
		if i == 0 {
			k.signer = e
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return k, nil
}

// newKeyEntry validates key and builds its entry.
func newKeyEntry(key Key, signing bool) (*keyEntry, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("admission: key %q: "+format, append([]any{key.ID}, args...)...)
	}
	switch {
	case key.ID == "":
		return nil, fail("empty key id")
	case len(key.ID) > maxKeyIDLen:
		return nil, fail("key id longer than %d bytes", maxKeyIDLen)
	case !utf8.ValidString(key.ID):
		return nil, fail("key id is not valid UTF-8")
	}
	e := &keyEntry{id: key.ID, alg: key.Alg}
	switch key.Alg {
	case algHS256:
		if len(key.Private) != 0 || len(key.Public) != 0 {
			return nil, fail("HS256 key with Ed25519 key material")
		}
		if len(key.Secret) < minSecretLen {
			return nil, fail("HS256 secret shorter than %d bytes", minSecretLen)
		}
		secret := bytes.Clone(key.Secret)
		e.method = jwt.SigningMethodHS256
		e.signKey, e.verifyKey = secret, secret
	case algEdDSA:
		if len(key.Secret) != 0 {
			return nil, fail("EdDSA key with an HMAC secret")
		}
		var pub ed25519.PublicKey
		if key.Private != nil {
			if len(key.Private) != ed25519.PrivateKeySize {
				return nil, fail("Ed25519 private key is %d bytes, want %d", len(key.Private), ed25519.PrivateKeySize)
			}
			priv := ed25519.NewKeyFromSeed(key.Private.Seed())
			if !priv.Equal(key.Private) {
				return nil, fail("Ed25519 private key does not match its seed")
			}
			pub = priv.Public().(ed25519.PublicKey)
			e.signKey = priv
		}
		if key.Public != nil {
			if len(key.Public) != ed25519.PublicKeySize {
				return nil, fail("Ed25519 public key is %d bytes, want %d", len(key.Public), ed25519.PublicKeySize)
			}
			if pub != nil && !pub.Equal(key.Public) {
				return nil, fail("Ed25519 public key does not match the private key")
			}
			pub = bytes.Clone(key.Public)
		}
		if pub == nil {
			return nil, fail("EdDSA key without a public or private key")
		}
		e.method = jwt.SigningMethodEdDSA
		e.public = pub
		e.verifyKey = pub
	case "":
		return nil, fail("no algorithm (want HS256 or EdDSA)")
	default:
		return nil, fail("unsupported algorithm %q (want HS256 or EdDSA)", key.Alg)
	}
	if signing && e.signKey == nil {
		return nil, fail("the signing key has no private key")
	}

	hdr, err := json.Marshal(map[string]string{"alg": e.alg, "kid": e.id, "typ": "JWT"})
	if err != nil {
		return nil, fail("encode header: %v", err)
	}
	e.header = base64.RawURLEncoding.EncodeToString(hdr)
	e.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{e.alg}),
		jwt.WithoutClaimsValidation(), // times are checked with the caller's now
		jwt.WithStrictDecoding(),
	)
	e.keyfunc = func(t *jwt.Token) (any, error) {
		// The parser already refused any other algorithm; the header
		// must also name this key (the fast path matched it by its
		// encoded header, the slow path by a separate decode).
		if alg, _ := t.Header["alg"].(string); alg != e.alg {
			return nil, errAlgMismatch
		}
		if kid, _ := t.Header["kid"].(string); kid != e.id {
			return nil, errKidMismatch
		}
		return e.verifyKey, nil
	}
	return e, nil
}

// JWKS returns the EdDSA public keys of the keyring (signing key first) as
// a JSON Web Key Set (RFC 7517, keys as RFC 8037 OKP keys), for origins
// that verify passes themselves. HS256 keys never appear; a keyring
// without EdDSA keys gives {"keys":[]}.
func (k *Keyring) JWKS() ([]byte, error) {
	type jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
		Alg string `json:"alg"`
		Use string `json:"use"`
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, e := range k.keys {
		if e.alg != algEdDSA {
			continue
		}
		set.Keys = append(set.Keys, jwk{
			Kty: "OKP",
			Crv: "Ed25519",
			X:   base64.RawURLEncoding.EncodeToString(e.public),
			Kid: e.id,
			Alg: algEdDSA,
			Use: "sig",
		})
	}
	return json.Marshal(set)
}

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
	if err := c.checkSignable(); err != nil {
		return "", err
	}
	return k.sign(&ticketJSON{
		Typ: typTicket, Ev: c.ev, Vid: hexVisitor(c.vid), Lane: c.lane, Tr: c.tr,
		Num: c.num, Bind: c.bind, Iat: c.iat, Exp: c.exp,
	})
}

// SignPass signs p with the signing key. Besides the conditions of
// SignTicket, it refuses an ID that is empty, longer than 64 bytes or not
// made of base64url characters.
func (k *Keyring) SignPass(p Pass) (string, error) {
	c := claims{
		typ: typPass, jti: p.ID, ev: p.Event, vid: p.Visitor, lane: p.Lane,
		num: p.Number, bind: p.Binding, iat: p.IssuedAt.Unix(), exp: p.ExpiresAt.Unix(),
		seen: passClaimSet,
	}
	if err := c.checkSignable(); err != nil {
		return "", err
	}
	return k.sign(&passJSON{
		Typ: typPass, Jti: c.jti, Ev: c.ev, Vid: hexVisitor(c.vid), Lane: c.lane,
		Num: c.num, Bind: c.bind, Iat: c.iat, Exp: c.exp,
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
	return Ticket{
		Event:     c.ev,
		Visitor:   c.vid,
		Lane:      c.lane,
		Tranche:   c.tr,
		Number:    c.num,
		Binding:   c.bind,
		IssuedAt:  time.Unix(c.iat, 0).UTC(),
		ExpiresAt: time.Unix(c.exp, 0).UTC(),
	}, nil
}

// VerifyPass checks a pass token and returns its pass, under the rules of
// VerifyTicket (a ticket is never a pass). It knows nothing of
// revocations.
func (k *Keyring) VerifyPass(token, event, binding string, now time.Time) (Pass, error) {
	c, err := k.verify(token, typPass, event, binding, now)
	if err != nil {
		return Pass{}, err
	}
	return Pass{
		ID:        c.jti,
		Event:     c.ev,
		Visitor:   c.vid,
		Lane:      c.lane,
		Number:    c.num,
		Binding:   c.bind,
		IssuedAt:  time.Unix(c.iat, 0).UTC(),
		ExpiresAt: time.Unix(c.exp, 0).UTC(),
	}, nil
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

// lookup returns the key a token's kid names. A header the keyring writes
// itself is found by a map lookup; any other is decoded (slow path).
func (k *Keyring) lookup(token string) (*keyEntry, error) {
	if len(token) > maxTokenLen {
		return nil, errTooLong
	}
	hdr, _, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errMalformed
	}
	if e := k.byHeader[hdr]; e != nil {
		return e, nil
	}
	if len(hdr) > maxHeaderLen {
		return nil, errMalformed
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(hdr)
	if err != nil {
		return nil, errMalformed
	}
	var h struct {
		Kid *string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, errMalformed
	}
	if h.Kid == nil || *h.Kid == "" {
		return nil, errNoKid
	}
	e := k.byID[*h.Kid]
	if e == nil {
		return nil, errUnknownKid
	}
	return e, nil
}

// Claim bits of claims.seen.
const (
	claimTyp = 1 << iota
	claimEv
	claimVid
	claimLane
	claimTr
	claimNum
	claimBind
	claimIat
	claimExp
	claimJti

	commonClaimSet = claimTyp | claimEv | claimVid | claimLane | claimNum | claimBind | claimIat | claimExp
	ticketClaimSet = commonClaimSet | claimTr
	passClaimSet   = commonClaimSet | claimJti
)

// claimNames are the claims this package reads.
var claimNames = [][]byte{
	[]byte("typ"), []byte("ev"), []byte("vid"), []byte("lane"), []byte("tr"),
	[]byte("num"), []byte("bind"), []byte("iat"), []byte("exp"), []byte("jti"),
}

// claims are a decoded ticket or pass payload. It implements
// json.Unmarshaler with a strict reader of exactly the claims this package
// writes, which spares the reflection of encoding/json on the hot path.
type claims struct {
	typ                 string // typTicket, typPass, or "" (anything else)
	ev, lane, bind, jti string
	vid                 VisitorID
	tr                  int
	num                 uint64
	iat, exp            int64
	seen                uint16 // claim bits present
	decoded             bool
}

// Claims decoding failures (wrapped into ErrBadToken by the parser).
var (
	errClaimsSyntax    = errors.New("claims are not a JSON object")
	errClaimDuplicate  = errors.New("duplicate claim (names are case-sensitive)")
	errClaimEscapedKey = errors.New("escaped claim name")
	errClaimValue      = errors.New("malformed claim value")
)

// UnmarshalJSON reads a payload: a JSON object whose known claims have the
// right JSON types (strings; non-negative integers for tr, num, iat and
// exp), each at most once and spelt exactly (no escapes, no other case).
// Unknown claims are skipped.
func (c *claims) UnmarshalJSON(b []byte) error {
	*c = claims{}
	r := objectReader{b: b}
	if !r.open() {
		return errClaimsSyntax
	}
	for {
		key, val, ok, err := r.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var bit uint16
		switch string(key) {
		case "typ":
			bit = claimTyp
		case "ev":
			bit = claimEv
		case "vid":
			bit = claimVid
		case "lane":
			bit = claimLane
		case "tr":
			bit = claimTr
		case "num":
			bit = claimNum
		case "bind":
			bit = claimBind
		case "iat":
			bit = claimIat
		case "exp":
			bit = claimExp
		case "jti":
			bit = claimJti
		default:
			// encoding/json would read "EV" as ev: refuse what other
			// decoders may read differently.
			for _, name := range claimNames {
				if bytes.EqualFold(key, name) {
					return errClaimDuplicate
				}
			}
			continue
		}
		if c.seen&bit != 0 {
			return errClaimDuplicate
		}
		c.seen |= bit
		switch bit {
		case claimTyp:
			s, ok := plainString(val)
			switch {
			case !ok:
				return errClaimValue
			case string(s) == typTicket:
				c.typ = typTicket
			case string(s) == typPass:
				c.typ = typPass
			}
		case claimEv:
			c.ev, err = jsonString(val)
		case claimLane:
			c.lane, err = jsonString(val)
		case claimBind:
			c.bind, err = jsonString(val)
		case claimJti:
			c.jti, err = jsonString(val)
		case claimVid:
			s, ok := plainString(val)
			if !ok || !decodeLowerHex(c.vid[:], s) {
				return errClaimValue
			}
		case claimTr:
			n, ok := jsonUint(val)
			if !ok || n > uint64(maxInt) {
				return errClaimValue
			}
			c.tr = int(n)
		case claimNum:
			n, ok := jsonUint(val)
			if !ok {
				return errClaimValue
			}
			c.num = n
		case claimIat, claimExp:
			n, ok := jsonUint(val)
			if !ok || n > maxUnix {
				return errClaimValue
			}
			if bit == claimIat {
				c.iat = int64(n)
			} else {
				c.exp = int64(n)
			}
		}
		if err != nil {
			return err
		}
	}
	c.decoded = true
	return nil
}

const maxInt = int(^uint(0) >> 1)

// checkShape validates decoded (or to be signed) claims: exactly the
// claims of the type, each within bounds.
func (c *claims) checkShape() error {
	want := uint16(ticketClaimSet)
	if c.typ == typPass {
		want = passClaimSet
	}
	allKnown := uint16(ticketClaimSet | passClaimSet)
	switch {
	case c.seen&allKnown != want:
		return errMissingClaim
	case c.ev == "":
		return errBadEvent
	case c.lane == "" || len(c.lane) > maxLaneLen:
		return errBadLane
	case c.tr < 0:
		return errBadTranche
	case c.typ == typPass && !validPassID(c.jti):
		return errBadPassID
	case c.iat <= 0 || c.exp > maxUnix || c.exp <= c.iat:
		return errBadTimes
	}
	return nil
}

// checkSignable is checkShape plus what JSON would not carry exactly
// (invalid UTF-8 is replaced when encoded).
func (c *claims) checkSignable() error {
	switch {
	case !utf8.ValidString(c.ev):
		return errBadEvent
	case !utf8.ValidString(c.lane):
		return errBadLane
	case !utf8.ValidString(c.bind):
		return errBadBinding
	}
	return c.checkShape()
}

// The jwt.Claims methods. The parser does not validate claims (the Verify
// methods check times against their now); these only make claims a
// jwt.Claims.

func (c *claims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.exp, 0)), nil
}
func (c *claims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.iat, 0)), nil
}
func (c *claims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (c *claims) GetIssuer() (string, error)              { return "", nil }
func (c *claims) GetSubject() (string, error)             { return "", nil }
func (c *claims) GetAudience() (jwt.ClaimStrings, error)  { return nil, nil }

// objectReader walks the members of one JSON object. encoding/json has
// validated the document before calling UnmarshalJSON, but the reader does
// not rely on it: on any input it fails or returns in-bounds slices.
type objectReader struct {
	b []byte
	i int
	n int // members read
}

func (r *objectReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// open consumes the opening brace.
func (r *objectReader) open() bool {
	r.space()
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return false
	}
	r.i++
	return true
}

// next returns the next member's name (without quotes; names with escapes
// are refused) and raw value; ok is false after the closing brace.
func (r *objectReader) next() (key, val []byte, ok bool, err error) {
	r.space()
	if r.i >= len(r.b) {
		return nil, nil, false, errClaimsSyntax
	}
	if r.b[r.i] == '}' {
		r.i++
		r.space()
		if r.i != len(r.b) {
			return nil, nil, false, errClaimsSyntax
		}
		return nil, nil, false, nil
	}
	if r.n > 0 {
		if r.b[r.i] != ',' {
			return nil, nil, false, errClaimsSyntax
		}
		r.i++
		r.space()
	}
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, nil, false, errClaimsSyntax
	}
	end, ok := r.stringEnd(r.i)
	if !ok {
		return nil, nil, false, errClaimsSyntax
	}
	key = r.b[r.i+1 : end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return nil, nil, false, errClaimEscapedKey
	}
	r.i = end + 1
	r.space()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return nil, nil, false, errClaimsSyntax
	}
	r.i++
	r.space()
	start := r.i
	if !r.skipValue() {
		return nil, nil, false, errClaimsSyntax
	}
	r.n++
	return key, r.b[start:r.i], true, nil
}

// stringEnd returns the index of the quote closing the string that opens
// at i.
func (r *objectReader) stringEnd(i int) (int, bool) {
	for j := i + 1; j < len(r.b); j++ {
		switch r.b[j] {
		case '\\':
			j++
		case '"':
			return j, true
		}
	}
	return 0, false
}

// skipValue moves past one value: a string, an object or array (nested
// to any depth), or a literal.
func (r *objectReader) skipValue() bool {
	if r.i >= len(r.b) {
		return false
	}
	switch r.b[r.i] {
	case '"':
		end, ok := r.stringEnd(r.i)
		r.i = end + 1
		return ok
	case '{', '[':
		depth := 0
		for r.i < len(r.b) {
			switch r.b[r.i] {
			case '"':
				end, ok := r.stringEnd(r.i)
				if !ok {
					return false
				}
				r.i = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					r.i++
					return true
				}
			}
			r.i++
		}
		return false
	}
	start := r.i
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return r.i > start
		}
		r.i++
	}
	return r.i > start
}

// plainString returns the content of a JSON string without escapes.
func plainString(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return nil, false
	}
	s := val[1 : len(val)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	return s, true
}

// jsonString decodes a JSON string, which must be valid UTF-8 (JSON
// decoders differ on how they replace invalid UTF-8, so it is refused).
func jsonString(val []byte) (string, error) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || !utf8.Valid(val) {
		return "", errClaimValue
	}
	if s, ok := plainString(val); ok {
		return string(s), nil
	}
	var s string // escapes: the rare case, left to encoding/json
	if err := json.Unmarshal(val, &s); err != nil {
		return "", errClaimValue
	}
	return s, nil
}

// jsonUint reads a non-negative JSON integer (no sign, fraction, exponent
// or leading zero) that fits in a uint64.
func jsonUint(val []byte) (uint64, bool) {
	if len(val) == 0 || len(val) > 20 || (len(val) > 1 && val[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range val {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// decodeLowerHex decodes exactly len(dst) bytes of lower-case hex.
func decodeLowerHex(dst, s []byte) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := lowerHex(s[2*i])
		lo, ok2 := lowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// validPassID reports whether s is 1 to 64 base64url characters.
func validPassID(s string) bool {
	if s == "" || len(s) > maxPassIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

var _ jwt.Claims = (*claims)(nil)
