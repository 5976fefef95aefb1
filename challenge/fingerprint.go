package challenge

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/waitroom/waitroom/internal/ascii"
)

// HeaderFingerprint is a short, stable fingerprint of how a client writes
// its request headers: which of the headers a browser always decides for
// itself it sends, in what order, and the client-hint brand list. It is
// the same for a browser's GET of the challenge and its POST of the join
// (headers that differ between the two, such as Content-Type, Origin,
// Accept or Cookie, do not take part), and it differs between a browser
// and an HTTP library that copies only some of them, or copies them in
// another order.
//
// It is the first 12 hex digits of SHA-256 over, for each header of
// fingerprintHeaders present, in wire order, its lower-case name and a
// comma; then, after a "|", the Sec-CH-UA value. Pseudo-headers and
// repeated names after the first are skipped. It allocates only the
// returned string.
func HeaderFingerprint(hs []Header) string {
	sum := headerFingerprintSum(hs)
	return hex.EncodeToString(sum[:])
}

// AppendHeaderFingerprint appends HeaderFingerprint(hs) to dst; it
// allocates nothing when dst has room for its 12 bytes.
func AppendHeaderFingerprint(dst []byte, hs []Header) []byte {
	sum := headerFingerprintSum(hs)
	return hex.AppendEncode(dst, sum[:])
}

// headerFingerprintSum is HeaderFingerprint before hex: the first 6 bytes
// of the hash. It allocates nothing.
func headerFingerprintSum(hs []Header) [6]byte {
	h := sha256.New()
	var seen [len(fingerprintHeaders)]bool
	var buf [32]byte
	hints := ""
	for _, hd := range hs {
		if len(hd.Name) == 0 || hd.Name[0] == ':' {
			continue
		}
		for i, name := range fingerprintHeaders {
			if seen[i] || !ascii.EqualFold(hd.Name, name) {
				continue
			}
			seen[i] = true
			h.Write(append(buf[:0], name...))
			h.Write([]byte{','})
			if name == "sec-ch-ua" {
				hints = hd.Value
			}
			break
		}
	}
	h.Write([]byte{'|'})
	for len(hints) > 0 { // in pieces: []byte(hints) would allocate
		n := copy(buf[:], hints)
		h.Write(buf[:n])
		hints = hints[n:]
	}
	var sum [sha256.Size]byte
	return [6]byte(h.Sum(sum[:0]))
}

// fingerprintHeaders are the headers a browser sends on every fetch, GET
// or POST, in an order of its own: the ones HeaderFingerprint reads.
var fingerprintHeaders = [...]string{
	"host", "connection", "user-agent", "accept-language", "accept-encoding",
	"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform",
	"sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "dnt", "priority",
}

// TLSStack is the part of a JA4 fingerprint that names the client's TLS
// stack and stays the same on every connection it makes: the protocol,
// TLS version, cipher count and ALPN of section a, and section b, the
// hash of the cipher list ("t1315h2_8daaf6152771"). The extension count
// and section c are left out, because a browser resuming a session on
// its next connection sends the pre_shared_key extension (and, depending
// on the hello's length, padding), which changes both; so is the SNI
// flag, which says whether the client was given a host name or an
// address to connect to, not what it is. It returns "" for a string that
// is not a JA4 fingerprint.
func TLSStack(ja4 string) string {
	if !ValidJA4(ja4) {
		return ""
	}
	return ja4[:3] + ja4[4:6] + ja4[8:10] + "_" + ja4[11:23]
}

// AppendTLSStack appends TLSStack(ja4) to dst, or nothing when ja4 is not
// a JA4 fingerprint; it allocates nothing when dst has room
// (TLSStackLen bytes).
func AppendTLSStack(dst []byte, ja4 string) []byte {
	if !ValidJA4(ja4) {
		return dst
	}
	return appendTLSStack(dst, ja4)
}

// TLSStackLen is the length of a TLSStack.
const TLSStackLen = ja4StackLen

// ja4StackLen is the length of a TLSStack.
const ja4StackLen = 3 + 2 + 2 + 1 + 12

// appendTLSStack appends TLSStack(ja4) to b, for ja4 already known to be
// valid; it allocates nothing when b has room.
func appendTLSStack(b []byte, ja4 string) []byte {
	b = append(b, ja4[:3]...)
	b = append(b, ja4[4:6]...)
	b = append(b, ja4[8:10]...)
	b = append(b, '_')
	return append(b, ja4[11:23]...)
}
