package jsonstrict

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of what Decode accepts.
const (
	// MaxDepth bounds how deep arrays and objects nest (the top object
	// is level 1).
	MaxDepth = 16
	// MaxFields bounds the fields of one object.
	MaxFields = 32
	// maxQuoted bounds a field name repeated in a message.
	maxQuoted = 64
	// maxScratch bounds the buffer a pooled Reader keeps.
	maxScratch = 4 << 10
)

// Error is a problem with the input, in words the client who sent it may
// read. An Error is immutable and safe for concurrent use.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

// Errors without detail, built once.
var (
	errNotUTF8     = &Error{"the body is not valid UTF-8"}
	errEmpty       = &Error{"a JSON object is required"}
	errNotObject   = &Error{"the body must be a JSON object"}
	errTrailing    = &Error{"unexpected data after the JSON object"}
	errTruncated   = &Error{"truncated JSON"}
	errDeep        = &Error{"nested too deeply"}
	errTooMany     = &Error{"too many fields in one object"}
	errFieldName   = &Error{"a field name has an escape or a control character"}
	errUnknownName = &Error{"the body has an unknown field"}
)

// Reader reads the values of one JSON document for Decode's callback. It
// is not safe for concurrent use, and is valid only until Decode returns.
type Reader struct {
	b     []byte
	i     int
	depth int
	// scratch holds decoded string bytes when a string has escapes.
	scratch []byte
}

var readers = sync.Pool{New: func() any { return new(Reader) }}

// Decode reads body, which must be one JSON object, calling field for each
// of its fields with the field's name (which aliases body). field must
// read the value, with one of the Reader's methods, or return an error;
// it is not called for a second field of the same name (that is an
// error).
func Decode(body []byte, field func(r *Reader, name []byte) error) error {
	if !utf8.Valid(body) {
		return errNotUTF8
	}
	r := readers.Get().(*Reader)
	r.b, r.i, r.depth = body, 0, 0
	err := r.top(field)
	r.b = nil
	if cap(r.scratch) > maxScratch {
		r.scratch = nil
	}
	readers.Put(r)
	return err
}

func (r *Reader) top(field func(r *Reader, name []byte) error) error {
	r.ws()
	if r.i >= len(r.b) {
		return errEmpty
	}
	if r.b[r.i] != '{' {
		return errNotObject
	}
	if err := r.Object("", field); err != nil {
		return err
	}
	r.ws()
	if r.i < len(r.b) {
		return errTrailing
	}
	return nil
}

func (r *Reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *Reader) malformed() error {
	if r.i >= len(r.b) {
		return errTruncated
	}
	return errorf("malformed JSON at byte %d", r.i)
}

// Null consumes a JSON null if one is next, and reports whether it did.
func (r *Reader) Null() bool {
	r.ws()
	if len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// Object reads an object, calling field for each field as Decode does.
// path names the object in messages ("" for the body, "best",
// "sections[2]").
func (r *Reader) Object(path string, field func(r *Reader, name []byte) error) error {
	more, err := r.open(path, '{', '}', "an object")
	var seen [MaxFields][]byte
	n := 0
	for ; more && err == nil; more, err = r.next('}') {
		r.ws()
		name, err := r.name()
		if err != nil {
			return err
		}
		for _, s := range seen[:n] {
			if bytes.Equal(s, name) {
				if plainName(name) {
					return errorf("field %s given twice", strconv.Quote(join(path, string(name))))
				}
				return &Error{"a field is given twice"}
			}
		}
		if n == MaxFields {
			return errTooMany
		}
		seen[n] = name
		n++
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return r.malformed()
		}
		r.i++
		if err := field(r, name); err != nil {
			return err
		}
	}
	return err
}

// open consumes the opening bracket of an object or array (want names it
// in messages) and says whether any member follows; an empty one is
// closed at once.
func (r *Reader) open(path string, open, close byte, want string) (bool, error) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != open {
		return false, typeError(path, want)
	}
	if r.depth++; r.depth > MaxDepth {
		return false, errDeep
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == close {
		r.i++
		r.depth--
		return false, nil
	}
	return true, nil
}

// next consumes what follows a member or element: a comma, and then
// another one follows, or the closing bracket.
func (r *Reader) next(close byte) (bool, error) {
	r.ws()
	if r.i >= len(r.b) {
		return false, r.malformed()
	}
	switch r.b[r.i] {
	case ',':
		r.i++
		return true, nil
	case close:
		r.i++
		r.depth--
		return false, nil
	}
	return false, r.malformed()
}

// name reads a field name: a string without escapes or control
// characters.
func (r *Reader) name() ([]byte, error) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, r.malformed()
	}
	start := r.i + 1
	j := start
	for ; j < len(r.b) && r.b[j] != '"'; j++ {
		if c := r.b[j]; c == '\\' || c < 0x20 {
			return nil, errFieldName
		}
	}
	if j >= len(r.b) {
		r.i = j
		return nil, r.malformed()
	}
	r.i = j + 1
	return r.b[start:j], nil
}

// Array reads an array, calling elem for element i, which must read it.
func (r *Reader) Array(path string, elem func(r *Reader, i int) error) error {
	more, err := r.open(path, '[', ']', "an array")
	for i := 0; more && err == nil; i++ {
		if err := elem(r, i); err != nil {
			return err
		}
		more, err = r.next(']')
	}
	return err
}

// String reads a string.
func (r *Reader) String(path string) (string, error) {
	b, err := r.str(path, false)
	return string(b), err
}

// Plain reads a string that has no escapes and returns its bytes, which
// alias the input (for values that are plain by contract, such as hex).
func (r *Reader) Plain(path string) ([]byte, error) { return r.str(path, true) }

// str reads a string (refusing escapes when plain); the bytes returned
// alias the input or the scratch buffer, until the next read.
func (r *Reader) str(path string, plain bool) ([]byte, error) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, typeError(path, "a string")
	}
	start := r.i + 1
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			return r.b[start:j], nil
		case c == '\\' && plain:
			return nil, errorf("%s must be a string without escapes", pathName(path))
		case c == '\\':
			return r.escaped(start, j)
		case c < 0x20:
			r.i = j
			return nil, r.malformed()
		}
	}
	r.i = len(r.b)
	return nil, r.malformed()
}

// escaped finishes a string that has escapes; b[start:j] is plain.
func (r *Reader) escaped(start, j int) ([]byte, error) {
	out := append(r.scratch[:0], r.b[start:j]...)
	for j < len(r.b) {
		c := r.b[j]
		switch {
		case c == '"':
			r.i = j + 1
			r.scratch = out
			return out, nil
		case c < 0x20:
			r.i = j
			return nil, r.malformed()
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(r.b) {
			r.i = j
			return nil, r.malformed()
		}
		switch e := r.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			c1, ok := hex4(r.b, j+2)
			if !ok {
				r.i = j
				return nil, r.malformed()
			}
			j += 6
			rn := rune(c1)
			if utf16.IsSurrogate(rn) {
				// Only a high surrogate followed by a low one is a rune.
				c2, ok := 0, false
				if j+1 < len(r.b) && r.b[j] == '\\' && r.b[j+1] == 'u' {
					c2, ok = hex4(r.b, j+2)
				}
				rn = utf16.DecodeRune(rn, rune(c2))
				if !ok || rn == utf8.RuneError {
					r.i = j
					return nil, errorf("invalid escaped character at byte %d", j)
				}
				j += 6
			}
			out = utf8.AppendRune(out, rn)
			continue
		default:
			r.i = j
			return nil, r.malformed()
		}
		j += 2
	}
	r.i = j
	return nil, r.malformed()
}

func hex4(b []byte, at int) (int, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// digits scans an integer's digits from r.i: the index past them, and
// whether they are a JSON integer (not a fraction or exponent; no leading
// zero). ok false with end == r.i means no number at all.
func (r *Reader) digits() (end int, ok bool) {
	j := r.i
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
		j++
	}
	switch {
	case j == r.i:
		return j, false
	case r.b[r.i] == '0' && j-r.i > 1:
		return j, false
	case j < len(r.b) && (r.b[j] == '.' || r.b[j] == 'e' || r.b[j] == 'E'):
		return j, false
	}
	return j, true
}

// Int reads a JSON integer (no fraction, no exponent) in [lo, hi].
func (r *Reader) Int(path string, lo, hi int64) (int64, error) {
	r.ws()
	neg := r.i < len(r.b) && r.b[r.i] == '-'
	if neg {
		r.i++
	}
	start := r.i
	end, ok := r.digits()
	if !ok {
		if end > start && r.b[start] == '0' && end-start > 1 {
			return 0, r.malformed() // a leading zero is not JSON at all
		}
		return 0, typeError(path, "an integer")
	}
	r.i = end
	v, ok := parseUint(r.b[start:end])
	n := int64(v) // 1<<63 becomes math.MinInt64, which is right negated
	if neg {
		n = -n
	}
	if !ok || (neg && v > 1<<63) || (!neg && v > math.MaxInt64) || n < lo || n > hi {
		return 0, errorf("%s must be an integer from %d to %d", pathName(path), lo, hi)
	}
	return n, nil
}

// Uint reads a non-negative JSON integer (no sign, fraction, exponent or
// leading zero) of at most hi.
func (r *Reader) Uint(path string, hi uint64) (uint64, error) {
	r.ws()
	start := r.i
	end, ok := r.digits()
	if !ok {
		if end > start && r.b[start] == '0' && end-start > 1 {
			return 0, r.malformed()
		}
		return 0, typeError(path, "a non-negative integer")
	}
	r.i = end
	v, ok := parseUint(r.b[start:end])
	if !ok || v > hi {
		return 0, errorf("%s must be an integer from 0 to %d", pathName(path), hi)
	}
	return v, nil
}

// parseUint reads decimal digits that fit in a uint64.
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Bool reads true or false.
func (r *Reader) Bool(path string) (bool, error) {
	r.ws()
	if r.i < len(r.b) {
		switch r.b[r.i] {
		case 't':
			return true, r.literal("true")
		case 'f':
			return false, r.literal("false")
		}
	}
	return false, typeError(path, "true or false")
}

// Strings reads an array of strings.
func (r *Reader) Strings(path string) ([]string, error) {
	out := make([]string, 0, 4)
	err := r.Array(path, func(r *Reader, i int) error {
		r.ws()
		if r.i < len(r.b) && r.b[r.i] != '"' {
			// Build the element's path only when it is needed.
			return typeError(fmt.Sprintf("%s[%d]", path, i), "a string")
		}
		s, err := r.String(path)
		out = append(out, s)
		return err
	})
	return out, err
}

// Skip reads any one value and discards it, checking it as strictly as
// the rest (its strings, numbers, nesting, and the names of its objects).
func (r *Reader) Skip() error {
	r.ws()
	if r.i >= len(r.b) {
		return r.malformed()
	}
	switch c := r.b[r.i]; {
	case c == '"':
		_, err := r.str("", false)
		return err
	case c == '{':
		return r.Object("", func(r *Reader, _ []byte) error { return r.Skip() })
	case c == '[':
		return r.Array("", func(r *Reader, _ int) error { return r.Skip() })
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return r.malformed()
}

func (r *Reader) literal(s string) error {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return r.malformed()
	}
	r.i += len(s)
	return nil
}

// number reads any JSON number.
func (r *Reader) number() error {
	if r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case r.i < len(r.b) && r.b[r.i] >= '1' && r.b[r.i] <= '9':
		r.run()
	default:
		return r.malformed()
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.run() == 0 {
			return r.malformed()
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.run() == 0 {
			return r.malformed()
		}
	}
	return nil
}

// run consumes digits and says how many.
func (r *Reader) run() int {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// UnknownField is the error for a field the caller does not know: it
// repeats the name (after path) only when the name is plain.
func UnknownField(path string, name []byte) error {
	if plainName(name) {
		return errorf("unknown field %s", strconv.Quote(join(path, string(name))))
	}
	if path == "" {
		return errUnknownName
	}
	return errorf("%s has an unknown field", strconv.Quote(path))
}

// plainName reports whether a field name is short and plain enough to
// repeat in a message: 1 to 64 of [A-Za-z0-9_.-].
func plainName(s []byte) bool {
	if len(s) == 0 || len(s) > maxQuoted {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func typeError(path, want string) error {
	return errorf("%s must be %s", pathName(path), want)
}

func pathName(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
