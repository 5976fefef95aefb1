// Package jsonstrict reads JSON that clients send, strictly and in one
// pass, without reflection. It is the one decoder of request bodies (the
// waiting room's join, the admin API, the inventory sidecar's API) and of
// the claims inside waitroom's own tokens.
//
// It accepts exactly one JSON object, in valid UTF-8, with nothing but
// white space after it, and refuses what encoding/json would let through
// or read in its own way: a field given twice (encoding/json keeps the
// last), a field name with escapes (encoding/json would read "\u0065vent"
// as "event"), strings with lone surrogates (encoding/json repairs them),
// nesting deeper than MaxDepth, objects of more than MaxFields fields.
// Field names are matched exactly by the caller (no case folding), and a
// caller refuses the names it does not know with UnknownField, or skips
// them with Skip where unknown members are allowed.
//
// Every error it returns is an *Error whose text is safe to show the
// client: it names the problem and the field, never the decoder's
// internals, and it repeats a field name only when the name is plain.
//
// The caller drives the decoding: Decode calls a function for each field
// of the object, which reads the field's value with the Reader's methods
// (String, Int, Uint, Object, Array, …). A Reader lives only for the
// duration of Decode and must not be kept.
//
// It is not a general JSON library: it does not encode, and it has no
// notion of structs or tags.
package jsonstrict
