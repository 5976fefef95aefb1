// Package ascii holds the byte-level helpers that HTTP header and path
// handling needs in many places: ASCII case folding (Lower, AppendLower,
// EqualFold, HasPrefixFold), trimming of optional whitespace (TrimOWS,
// RFC 9110 §5.6.3) and hexadecimal digits (Unhex).
//
// They only know ASCII: a byte outside it is never folded and never
// equal to anything but itself, which is what HTTP's case-insensitive
// tokens want (strings.EqualFold and bytes.EqualFold fold Unicode, so
// "K" (U+212A KELVIN SIGN) equals "k" there but not here).
//
// Every function is small enough for the compiler to inline, allocates
// nothing (AppendLower only when dst must grow) and is safe for
// concurrent use. The proxy calls them on its per-request path; their
// benchmarks and allocation tests are in this package.
//
// It is not a parser: each package still owns the grammar it parses.
package ascii
