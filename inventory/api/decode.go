package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/waitroom/waitroom/inventory"
)

// Request bodies are untrusted input. decodeStrict accepts exactly one JSON
// object, valid UTF-8, whose keys are all known, unique and spelled exactly
// as documented, with nothing after it. encoding/json alone would accept
// duplicate keys (last wins), keys in any letter case (and some non-ASCII
// look-alikes of ASCII letters), and replace invalid UTF-8 silently; two
// parsers reading one body differently is how smuggling starts, so all of
// that is refused here.

// maxNesting bounds how deep a body's arrays and objects nest; the deepest
// valid body (an event definition) nests four levels.
const maxNesting = 16

// maxKeys bounds the fields of one object; no documented object has
// more than six, and the duplicate check is quadratic.
const maxKeys = 16

// maxMessageInput bounds how much of a decoder's complaint (which may quote
// input) goes back to the client.
const maxMessageInput = 200

// decodeStrict decodes body into v (a pointer to a struct).
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return errors.New("body: not valid UTF-8")
	}
	if err := checkShape(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("body: unexpected data after the JSON object")
	}
	return nil
}

// checkShape walks the body's tokens: one object at the top, keys unique
// and from [a-z0-9_], nesting bounded, nothing after the object.
func checkShape(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []shapeFrame
	top := 0 // top-level values seen
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if top == 0 {
				return errors.New("body: a JSON object is required")
			}
			return nil
		}
		if err != nil {
			return bodyError(err)
		}
		if len(stack) == 0 {
			if top > 0 {
				return errors.New("body: unexpected data after the JSON object")
			}
			top++
			if tok != json.Delim('{') {
				return errors.New("body: must be a JSON object")
			}
			stack = append(stack, shapeFrame{object: true, wantKey: true})
			continue
		}
		f := &stack[len(stack)-1]
		if f.object && f.wantKey {
			if tok == json.Delim('}') {
				stack = stack[:len(stack)-1]
				valueDone(stack)
				continue
			}
			key, _ := tok.(string)
			if !validKey(key) {
				return fmt.Errorf("body: unknown field %s", quoteInput(key))
			}
			if len(f.keys) >= maxKeys {
				return errors.New("body: too many fields in one object")
			}
			for _, k := range f.keys {
				if k == key {
					return fmt.Errorf("body: field %q given twice", key)
				}
			}
			f.keys = append(f.keys, key)
			f.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxNesting {
				return errors.New("body: nested too deeply")
			}
			stack = append(stack, shapeFrame{object: tok == json.Delim('{'), wantKey: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone(stack)
		default:
			valueDone(stack)
		}
	}
}

// shapeFrame is one open array or object in checkShape.
type shapeFrame struct {
	object  bool
	wantKey bool     // an object's next token is a key (or its end)
	keys    []string // an object's keys so far
}

// valueDone notes that a value is complete: the innermost object, if any,
// expects a key next.
func valueDone(stack []shapeFrame) {
	if n := len(stack); n > 0 && stack[n-1].object {
		stack[n-1].wantKey = true
	}
}

// validKey reports whether k is spelled like a documented field: 1-64
// characters from [a-z0-9_].
func validKey(k string) bool {
	if len(k) == 0 || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// bodyError rewords a decoder error for the client: it names the field
// and the expected type, never more than a little of the input.
func bodyError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("body: malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return fmt.Errorf("body: %s must be %s, got JSON %s", field, typeName(typ.Type), truncateInput(typ.Value, 40))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("body: truncated JSON")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New("body: " + truncateInput(msg, maxMessageInput))
}

// truncateInput cuts s to at most n bytes (on a rune boundary).
func truncateInput(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer in range"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}

func quoteInput(s string) string {
	return fmt.Sprintf("%q", truncateInput(s, 64))
}

// Wire forms of the request bodies. Each lists exactly the fields a
// client may send.

// holdBody is POST /v1/events/{event}/holds. It is not inventory.HoldRequest
// because the wire carries ttl_ms (an extension for sub-second holds) and
// must tell an absent TTL from a zero one.
type holdBody struct {
	User       string                 `json:"user"`
	Seats      []string               `json:"seats"`
	Best       *inventory.BestRequest `json:"best"`
	GA         *inventory.GARequest   `json:"ga"`
	TTLSeconds *int64                 `json:"ttl_seconds"`
	TTLMillis  *int64                 `json:"ttl_ms"`
}

// Bounds of the TTL fields, checked here (not only by the store) so that
// no value can overflow a time.Duration on its way in.
const (
	maxTTLSeconds = int64(inventory.MaxHoldTTL / time.Second)
	maxTTLMillis  = int64(inventory.MaxHoldTTL / time.Millisecond)
)

// request turns the wire form into the store's request.
func (b *holdBody) request() (inventory.HoldRequest, error) {
	req := inventory.HoldRequest{User: b.User, Seats: b.Seats, Best: b.Best, GA: b.GA}
	if b.TTLSeconds != nil {
		if *b.TTLSeconds < 1 || *b.TTLSeconds > maxTTLSeconds {
			return req, fmt.Errorf("ttl_seconds: must be between 1 and %d", maxTTLSeconds)
		}
		req.TTLSeconds = int(*b.TTLSeconds)
	}
	if b.TTLMillis != nil {
		if *b.TTLMillis < 1 || *b.TTLMillis > maxTTLMillis {
			return req, fmt.Errorf("ttl_ms: must be between 1 and %d", maxTTLMillis)
		}
		req.TTL = time.Duration(*b.TTLMillis) * time.Millisecond
	}
	return req, nil
}

// eventBody is PUT /v1/events/{event}: the definition itself.
type eventBody = inventory.EventDef

// checkEventBody bounds what the store's validation could get wrong by
// overflow.
func checkEventBody(d *eventBody) error {
	if d.HoldTTLSeconds < 0 || int64(d.HoldTTLSeconds) > maxTTLSeconds {
		return fmt.Errorf("hold_ttl_seconds: must be between 0 (default %d) and %d", int(inventory.DefaultHoldTTL/time.Second), maxTTLSeconds)
	}
	return nil
}

// confirmBody is POST .../holds/{hold}/confirm; the body may be empty.
type confirmBody struct {
	PaymentRef string `json:"payment_ref"`
}

// cancelBody is POST .../orders/{order}/cancel; the body may be empty.
type cancelBody struct {
	Reason string `json:"reason"`
}
