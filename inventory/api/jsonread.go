package api

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Request bodies are untrusted input, read by one strict pull parser in a
// single pass. It accepts exactly one JSON object whose keys are all
// known, unique and spelled exactly as documented ([a-z0-9_], no escapes),
// values of the documented types (integers without fraction or exponent),
// valid UTF-8 without lone surrogates, bounded nesting, and nothing after
// the object. encoding/json would accept duplicate keys (last wins), keys
// in any letter case or look-alike spelling, and repair invalid text
// silently; two parsers reading one body differently is how smuggling
// starts, so all of that is refused. null is read as "absent".
//
// FuzzJSONReader holds it to encoding/json: whatever it accepts,
// encoding/json reads to the same values.

// maxNesting bounds how deep a body's arrays and objects nest; the deepest
// valid body (an event definition) nests four levels.
const maxNesting = 16

// maxKeys bounds the fields of one object; no documented object has more
// than six.
const maxKeys = 16

// maxMessageInput bounds how much input an error message quotes.
const maxMessageInput = 64

// reader reads one JSON body.
type reader struct {
	b     []byte
	i     int
	depth int
	// scratch holds decoded string bytes when a string has escapes.
	scratch []byte
}

// decodeBody reads body with fn, which reads the top-level object's
// fields, and checks that nothing follows.
func decodeBody(body []byte, fn func(r *reader, key string) error) error {
	if !utf8.Valid(body) {
		return badRequest("body: not valid UTF-8")
	}
	r := &reader{b: body}
	r.ws()
	if r.i >= len(r.b) {
		return badRequest("body: a JSON object is required")
	}
	if r.b[r.i] != '{' {
		return badRequest("body: must be a JSON object")
	}
	if err := r.object("", fn); err != nil {
		return err
	}
	r.ws()
	if r.i < len(r.b) {
		return badRequest("body: unexpected data after the JSON object")
	}
	return nil
}

func (r *reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *reader) malformed() error {
	if r.i >= len(r.b) {
		return badRequest("body: truncated JSON")
	}
	return badRequestf("body: malformed JSON at byte %d", r.i)
}

// null consumes a JSON null if one is next.
func (r *reader) null() bool {
	r.ws()
	if len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// object reads an object; fn reads each field's value. path names the
// object in messages ("" for the body, "best", "sections[2]").
func (r *reader) object(path string, fn func(r *reader, key string) error) error {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return typeError(path, "an object")
	}
	if r.depth++; r.depth > maxNesting {
		return badRequest("body: nested too deeply")
	}
	r.i++
	var keys [maxKeys]string
	n := 0
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		r.depth--
		return nil
	}
	for {
		r.ws()
		key, err := r.key(path)
		if err != nil {
			return err
		}
		for _, k := range keys[:n] {
			if k == key {
				return badRequestf("body: field %s given twice", join(path, key))
			}
		}
		if n == maxKeys {
			return badRequest("body: too many fields in one object")
		}
		keys[n] = key
		n++
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return r.malformed()
		}
		r.i++
		if err := fn(r, key); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return r.malformed()
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return nil
		default:
			return r.malformed()
		}
	}
}

// key reads an object key: a string of [a-z0-9_], 1-64 bytes, no escapes.
func (r *reader) key(path string) (string, error) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return "", r.malformed()
	}
	start := r.i + 1
	j := start
	for j < len(r.b) && r.b[j] != '"' {
		c := r.b[j]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') || j-start >= 64 {
			end := j
			for end < len(r.b) && r.b[end] != '"' && end-start < maxMessageInput {
				end++
			}
			return "", badRequestf("body: unknown field %s", join(path, strconv.Quote(string(r.b[start:end]))))
		}
		j++
	}
	if j >= len(r.b) {
		return "", r.malformed()
	}
	if j == start {
		return "", badRequestf("body: unknown field %s", join(path, `""`))
	}
	r.i = j + 1
	return string(r.b[start:j]), nil
}

// array reads an array; fn reads element i.
func (r *reader) array(path string, fn func(r *reader, i int) error) error {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '[' {
		return typeError(path, "an array")
	}
	if r.depth++; r.depth > maxNesting {
		return badRequest("body: nested too deeply")
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		r.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(r, i); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return r.malformed()
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return nil
		default:
			return r.malformed()
		}
	}
}

// str reads a string.
func (r *reader) str(path string) (string, error) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return "", typeError(path, "a string")
	}
	start := r.i + 1
	j := start
	for j < len(r.b) {
		c := r.b[j]
		switch {
		case c == '"':
			r.i = j + 1
			return string(r.b[start:j]), nil
		case c == '\\':
			return r.escaped(start, j)
		case c < 0x20:
			r.i = j
			return "", r.malformed()
		}
		j++
	}
	r.i = j
	return "", r.malformed()
}

// escaped finishes a string that has escapes; b[start:j] is plain.
func (r *reader) escaped(start, j int) (string, error) {
	out := append(r.scratch[:0], r.b[start:j]...)
	for j < len(r.b) {
		c := r.b[j]
		switch {
		case c == '"':
			r.i = j + 1
			r.scratch = out
			return string(out), nil
		case c < 0x20:
			r.i = j
			return "", r.malformed()
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(r.b) {
			r.i = j
			return "", r.malformed()
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
				return "", r.malformed()
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
					return "", badRequestf("body: invalid escaped character at byte %d", j)
				}
				j += 6
			}
			out = utf8.AppendRune(out, rn)
			continue
		default:
			r.i = j
			return "", r.malformed()
		}
		j += 2
	}
	r.i = j
	return "", r.malformed()
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

// integer reads a JSON integer (no fraction, no exponent) in [lo, hi].
func (r *reader) integer(path string, lo, hi int64) (int64, error) {
	r.ws()
	start := r.i
	j := r.i
	if j < len(r.b) && r.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
		j++
	}
	if j == digits {
		return 0, typeError(path, "an integer")
	}
	if r.b[digits] == '0' && j-digits > 1 {
		r.i = digits
		return 0, r.malformed()
	}
	if j < len(r.b) && (r.b[j] == '.' || r.b[j] == 'e' || r.b[j] == 'E') {
		return 0, typeError(path, "an integer")
	}
	r.i = j
	v, err := strconv.ParseInt(string(r.b[start:j]), 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, badRequestf("body: %s must be an integer from %d to %d", path, lo, hi)
	}
	return v, nil
}

// strings reads an array of strings.
func (r *reader) strings(path string) ([]string, error) {
	out := make([]string, 0, 4)
	err := r.array(path, func(r *reader, i int) error {
		r.ws()
		if r.i < len(r.b) && r.b[r.i] != '"' {
			// Build the element's path only when it is needed.
			return typeError(fmt.Sprintf("%s[%d]", path, i), "a string")
		}
		s, err := r.str(path)
		out = append(out, s)
		return err
	})
	return out, err
}

func typeError(path, want string) error {
	if path == "" {
		path = "body"
	}
	return badRequestf("body: %s must be %s", path, want)
}

func unknownField(path, key string) error {
	return badRequestf("body: unknown field %s", join(path, key))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Integer bounds of the bodies' numeric fields: wide enough for every
// valid value, narrow enough that nothing overflows on its way in; the
// store's validation gives the precise limits.
const (
	maxQuantity = 1 << 20
	maxCount    = 1 << 31
	maxPrice    = 1 << 53
)

// quoteInput quotes a piece of untrusted input for a message, cut short.
func quoteInput(s string) string {
	if len(s) > maxMessageInput {
		n := maxMessageInput
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
