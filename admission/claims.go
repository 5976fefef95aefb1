package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
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
