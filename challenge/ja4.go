package challenge

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"slices"
)

// JA4 returns the JA4 TLS client fingerprint of a ClientHello, as FoxIO's
// specification defines it (github.com/FoxIO-LLC/ja4,
// technical_details/JA4.md), for example
// "t13d1516h2_8daaf6152771_e5627efa2ab1":
//
//	a: protocol ("t": TLS over TCP), TLS version, "d" with SNI or "i"
//	   without, 2-digit counts of ciphers and of extensions, and the first
//	   and last characters of the first ALPN value;
//	b: the first 12 hex digits of the SHA-256 of the sorted cipher list;
//	c: the same of the sorted extension list without SNI and ALPN,
//	   followed by "_" and the signature algorithms in the order sent.
//
// GREASE values (RFC 8701, 0x?a?a) are left out everywhere. It is meant
// for tls.Config.GetConfigForClient (or GetCertificate) and is safe for
// concurrent use.
//
// What *tls.ClientHelloInfo does and does not give:
//   - The protocol is always "t": crypto/tls serves TLS over TCP. QUIC
//     ("q") and DTLS ("d") hellos never reach it.
//   - Without the supported_versions extension, crypto/tls fills
//     SupportedVersions from the legacy version field, whose highest value
//     is what the spec asks for then. SSL 2.0 hellos cannot be parsed by
//     crypto/tls, so "s2" never appears.
//   - CipherSuites, Extensions and SignatureSchemes are the lists as sent
//     (GREASE and SCSV included). SNI is judged by the presence of
//     extension 0x0000 in Extensions (ServerName is empty for an SNI
//     without a host_name entry); when Extensions is nil (a hand-built
//     ClientHelloInfo), by ServerName.
//   - SupportedProtos holds the ALPN values; crypto/tls rejects hellos
//     with an empty ALPN value, so the "first value empty" case ("00")
//     arises only without ALPN.
//   - SignatureSchemes comes from signature_algorithms (0x000d) only, as
//     the spec wants (not signature_algorithms_cert).
func JA4(h *tls.ClientHelloInfo) string {
	sni := slices.Contains(h.Extensions, 0x0000)
	if h.Extensions == nil {
		sni = h.ServerName != ""
	}
	sigs := make([]uint16, 0, len(h.SignatureSchemes))
	for _, s := range h.SignatureSchemes {
		sigs = append(sigs, uint16(s))
	}
	var alpn string
	if len(h.SupportedProtos) > 0 {
		alpn = h.SupportedProtos[0]
	}
	return ja4(ja4Hello{
		versions: h.SupportedVersions,
		sni:      sni,
		ciphers:  h.CipherSuites,
		exts:     h.Extensions,
		alpn:     alpn,
		sigs:     sigs,
	})
}

// ja4Hello is what JA4 reads of a ClientHello.
type ja4Hello struct {
	versions []uint16 // supported_versions, or the legacy version
	sni      bool
	ciphers  []uint16
	exts     []uint16
	alpn     string // first ALPN value, "" if none
	sigs     []uint16
}

func ja4(h ja4Hello) string {
	b := make([]byte, 0, len("t13d1516h2_8daaf6152771_e5627efa2ab1"))
	b = append(b, 't')
	b = append(b, ja4Version(h.versions)...)
	if h.sni {
		b = append(b, 'd')
	} else {
		b = append(b, 'i')
	}
	ciphers := ja4WithoutGREASE(h.ciphers)
	exts := ja4WithoutGREASE(h.exts)
	b = ja4AppendCount(b, len(ciphers))
	b = ja4AppendCount(b, len(exts))
	b = ja4AppendALPN(b, h.alpn)

	b = append(b, '_')
	slices.Sort(ciphers)
	b = ja4AppendHash(b, ja4HexList(nil, ciphers), len(ciphers) == 0)

	b = append(b, '_')
	// Sorted extensions without SNI and ALPN, then the signature
	// algorithms in their original order.
	kept := exts[:0]
	for _, e := range exts {
		if e != 0x0000 && e != 0x0010 {
			kept = append(kept, e)
		}
	}
	slices.Sort(kept)
	s := ja4HexList(nil, kept)
	if sigs := ja4WithoutGREASE(h.sigs); len(sigs) > 0 {
		s = append(s, '_')
		s = ja4HexList(s, sigs)
	}
	// The spec zeroes the hash when the sorted extension list is empty.
	b = ja4AppendHash(b, s, len(kept) == 0)
	return string(b)
}

// isGREASE reports whether v is a GREASE value (RFC 8701): 0x0a0a,
// 0x1a1a, … 0xfafa.
func isGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

func ja4WithoutGREASE(in []uint16) []uint16 {
	out := make([]uint16, 0, len(in))
	for _, v := range in {
		if !isGREASE(v) {
			out = append(out, v)
		}
	}
	return out
}

// ja4Version is the 2-character version of the highest non-GREASE
// value offered, as the spec says ("the highest value in the extension";
// a hello from crypto/tls is never DTLS, whose numbers count down).
func ja4Version(versions []uint16) string {
	var max uint16
	for _, v := range versions {
		if !isGREASE(v) && v > max {
			max = v
		}
	}
	switch max {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	case 0x0002:
		return "s2"
	case 0xfeff:
		return "d1"
	case 0xfefd:
		return "d2"
	case 0xfefc:
		return "d3"
	}
	return "00"
}

// ja4AppendCount appends n as two decimal digits, 99 at most.
func ja4AppendCount(b []byte, n int) []byte {
	n = min(n, 99)
	return append(b, byte('0'+n/10), byte('0'+n%10))
}

// ja4AppendALPN appends the first and last characters of the first ALPN
// value: "00" when there is none; when its first or last byte is not an
// ASCII letter or digit, the first and last characters of its hex form.
func ja4AppendALPN(b []byte, alpn string) []byte {
	if alpn == "" {
		return append(b, '0', '0')
	}
	first, last := alpn[0], alpn[len(alpn)-1]
	if ja4Alnum(first) && ja4Alnum(last) {
		return append(b, first, last)
	}
	const digits = "0123456789abcdef"
	return append(b, digits[first>>4], digits[last&0x0f])
}

func ja4Alnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// ja4HexList appends vs as comma-separated 4-digit lower-case hex.
func ja4HexList(b []byte, vs []uint16) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = hex.AppendEncode(b, []byte{byte(v >> 8), byte(v)})
	}
	return b
}

// ja4AppendHash appends the first 12 hex digits of SHA-256(s), or twelve
// zeros when zero is set.
func ja4AppendHash(b, s []byte, zero bool) []byte {
	if zero {
		return append(b, "000000000000"...)
	}
	sum := sha256.Sum256(s)
	return hex.AppendEncode(b, sum[:6])
}
