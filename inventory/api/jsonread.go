package api

import (
	"strconv"
	"unicode/utf8"

	"github.com/waitroom/waitroom/internal/jsonstrict"
)

// Request bodies are untrusted input, read by the one strict decoder of
// the module (internal/jsonstrict) in a single pass: exactly one JSON
// object whose fields are all known, unique and spelled exactly as
// documented, values of the documented types (integers without fraction
// or exponent), valid UTF-8 without lone surrogates, bounded nesting, and
// nothing after the object. encoding/json would accept duplicate keys
// (last wins), keys in any letter case or look-alike spelling, and repair
// invalid text silently; two parsers reading one body differently is how
// smuggling starts, so all of that is refused. null is read as "absent".
//
// FuzzJSONReader holds the decoders of this package to encoding/json:
// whatever they accept, encoding/json reads to the same values.

// maxMessageInput bounds how much input an error message quotes.
const maxMessageInput = 64

// decodeBody reads body with fn, which reads the top-level object's
// fields. The decoder's refusals become bad requests, their text prefixed
// with "body: "; fn's own errors come back as they are.
func decodeBody(body []byte, fn func(r *jsonstrict.Reader, key []byte) error) error {
	err := jsonstrict.Decode(body, fn)
	if je, ok := err.(*jsonstrict.Error); ok {
		return badRequest("body: " + je.Error())
	}
	return err
}

// unknownField is the refusal of a field named key in the object at path.
func unknownField(path string, key []byte) error { return jsonstrict.UnknownField(path, key) }

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
