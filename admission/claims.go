package admission

import (
	"bytes"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/internal/jsonstrict"
)

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
	claimAdm // optional in a pass: passes minted before renewal lack it
	claimEh  // optional in a ticket: the latest time first promised (see Ticket.PromisedBy)

	commonClaimSet = claimTyp | claimEv | claimVid | claimLane | claimNum | claimBind | claimIat | claimExp
	ticketClaimSet = commonClaimSet | claimTr
	passClaimSet   = commonClaimSet | claimJti
)

// claimNames are the claims this package reads.
var claimNames = [][]byte{
	[]byte("typ"), []byte("ev"), []byte("vid"), []byte("lane"), []byte("tr"),
	[]byte("num"), []byte("bind"), []byte("iat"), []byte("exp"), []byte("jti"), []byte("adm"),
	[]byte("eh"),
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
	iat, exp, adm, eh   int64
	seen                uint16 // claim bits present
	decoded             bool
}

// Claims decoding failures (wrapped into ErrBadToken by the parser).
var (
	errClaimsSyntax   = errors.New("claims are not a JSON object")
	errClaimDuplicate = errors.New("duplicate claim (names are case-sensitive)")
	errClaimValue     = errors.New("malformed claim value")
)

// UnmarshalJSON reads a payload with the strict decoder (one object, no
// field twice, no escapes in names, nothing after it): its known claims
// must have the right JSON types (strings; non-negative integers for tr,
// num, iat and exp), and be spelt exactly (no other case); typ and vid
// must be strings without escapes. Unknown claims are skipped.
func (c *claims) UnmarshalJSON(b []byte) error {
	*c = claims{}
	if err := jsonstrict.Decode(b, c.claim); err != nil {
		if _, ok := err.(*jsonstrict.Error); ok {
			return errClaimsSyntax
		}
		return err // errClaimValue or errClaimDuplicate
	}
	c.decoded = true
	return nil
}

// claim reads one member of a payload.
func (c *claims) claim(r *jsonstrict.Reader, key []byte) error {
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
	case "adm":
		bit = claimAdm
	case "eh":
		bit = claimEh
	default:
		// encoding/json would read "EV" as ev: refuse what other
		// decoders may read differently.
		for _, name := range claimNames {
			if bytes.EqualFold(key, name) {
				return errClaimDuplicate
			}
		}
		return r.Skip()
	}
	c.seen |= bit // the decoder refuses a name given twice
	var err error
	switch bit {
	case claimTyp:
		var s []byte
		s, err = r.Plain("typ")
		switch {
		case err != nil:
		case string(s) == typTicket:
			c.typ = typTicket
		case string(s) == typPass:
			c.typ = typPass
		}
	case claimEv:
		c.ev, err = r.String("ev")
	case claimLane:
		c.lane, err = r.String("lane")
	case claimBind:
		c.bind, err = r.String("bind")
	case claimJti:
		c.jti, err = r.String("jti")
	case claimVid:
		var s []byte
		if s, err = r.Plain("vid"); err == nil && !decodeLowerHex(c.vid[:], s) {
			err = errClaimValue
		}
	case claimTr:
		var n uint64
		n, err = r.Uint("tr", uint64(maxInt))
		c.tr = int(n)
	case claimNum:
		c.num, err = r.Uint("num", math.MaxUint64)
	case claimIat:
		var n uint64
		n, err = r.Uint("iat", maxUnix)
		c.iat = int64(n)
	case claimExp:
		var n uint64
		n, err = r.Uint("exp", maxUnix)
		c.exp = int64(n)
	case claimAdm:
		var n uint64
		n, err = r.Uint("adm", maxUnix)
		c.adm = int64(n)
	case claimEh:
		var n uint64
		n, err = r.Uint("eh", maxUnix)
		c.eh = int64(n)
	}
	if err != nil {
		return errClaimValue
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

// checkShape validates decoded (or to be signed) claims: exactly the
// claims of the type, each within bounds.
func (c *claims) checkShape() error {
	want, seen := uint16(ticketClaimSet), c.seen&^claimEh // eh is optional in a ticket
	if c.typ == typPass {
		want, seen = passClaimSet, c.seen&^claimAdm // adm is optional in a pass
	}
	allKnown := uint16(ticketClaimSet | passClaimSet | claimAdm | claimEh)
	switch {
	case seen&allKnown != want:
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
	case c.seen&claimAdm != 0 && (c.adm <= 0 || c.adm > c.iat):
		return errBadTimes
	case c.seen&claimEh != 0 && c.eh <= 0:
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
