package upstream

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// What happens to a client's request header on its way to the origin.
type rule uint8

const (
	ruleKeep       rule = iota
	ruleDrop            // hop-by-hop, framing, or set by waitroom
	ruleConnection      // dropped; names more headers to drop
	ruleUpgrade         // kept for a WebSocket upgrade only
	ruleCookie          // kept without the stripped cookies
	ruleXFF             // replaced (or appended to, from a trusted peer)
	ruleForwarded       // other X-Forwarded-*, client-address headers: kept from a trusted peer only
)

// requestRule classifies a request header name. Many servers and
// frameworks read "_" in a header name as "-" (CGI, PHP, Rails, Django's
// META), so an underscore spelling of a header waitroom manages
// (X_Waitroom_Visitor, X_Forwarded_For, Content_Length) is dropped
// outright: it can only be a client trying to pass for waitroom or a
// trusted proxy.
func requestRule(name []byte) rule {
	var buf [maxManagedName]byte
	if len(name) > len(buf) {
		// No managed name is this long; only the prefixes can match.
		if ascii.HasPrefixFold(name, "x-waitroom-") || ascii.HasPrefixFold(name, "x_waitroom_") {
			return ruleDrop
		}
		if ascii.HasPrefixFold(name, "x-forwarded-") {
			return ruleForwarded
		}
		if ascii.HasPrefixFold(name, "x_forwarded_") {
			return ruleDrop
		}
		return ruleKeep
	}
	canon, underscore := buf[:len(name)], false
	for i, c := range name {
		if c == '_' {
			c, underscore = '-', true
		}
		canon[i] = ascii.Lower(c)
	}
	r := canonicalRule(canon)
	if underscore && r != ruleKeep {
		return ruleDrop
	}
	return r
}

// maxManagedName is longer than every header name requestRule manages.
const maxManagedName = 64

// canonicalRule classifies a lower-case header name with "-" separators.
func canonicalRule(name []byte) rule {
	if len(name) > len("x-waitroom-") && ascii.HasPrefixFold(name, "x-waitroom-") {
		return ruleDrop
	}
	switch len(name) {
	case 2:
		if ascii.EqualFold(name, "te") {
			return ruleDrop
		}
	case 4:
		if ascii.EqualFold(name, "host") {
			return ruleDrop
		}
	case 6:
		switch {
		case ascii.EqualFold(name, "cookie"):
			return ruleCookie
		case ascii.EqualFold(name, "expect"):
			return ruleDrop
		}
	case 7:
		switch {
		case ascii.EqualFold(name, "upgrade"):
			return ruleUpgrade
		case ascii.EqualFold(name, "trailer"):
			return ruleDrop
		}
	case 9:
		if ascii.EqualFold(name, "forwarded") || ascii.EqualFold(name, "x-real-ip") {
			return ruleDrop
		}
	case 11:
		if ascii.EqualFold(name, "x-client-ip") {
			return ruleForwarded
		}
	case 13:
		if ascii.EqualFold(name, "x-rewrite-url") {
			return ruleDrop
		}
	case 10:
		switch {
		case ascii.EqualFold(name, "connection"):
			return ruleConnection
		case ascii.EqualFold(name, "keep-alive"):
			return ruleDrop
		}
	case 14:
		switch {
		case ascii.EqualFold(name, "content-length"), ascii.EqualFold(name, "x-original-url"), ascii.EqualFold(name, "x-original-uri"):
			return ruleDrop
		case ascii.EqualFold(name, "true-client-ip"):
			return ruleForwarded
		}
	case 15:
		if ascii.EqualFold(name, "x-forwarded-for") {
			return ruleXFF
		}
	case 16:
		switch {
		case ascii.EqualFold(name, "proxy-connection"), ascii.EqualFold(name, "x-forwarded-host"):
			return ruleDrop
		case ascii.EqualFold(name, "cf-connecting-ip"):
			return ruleForwarded
		}
	case 17:
		if ascii.EqualFold(name, "transfer-encoding") || ascii.EqualFold(name, "x-forwarded-proto") || ascii.EqualFold(name, "x-original-method") {
			return ruleDrop
		}
	case 18:
		if ascii.EqualFold(name, "proxy-authenticate") {
			return ruleDrop
		}
	case 19:
		switch {
		case ascii.EqualFold(name, "proxy-authorization"):
			return ruleDrop
		case ascii.EqualFold(name, "x-cluster-client-ip"):
			return ruleForwarded
		}
	}
	if len(name) > len("x-forwarded-") && ascii.HasPrefixFold(name, "x-forwarded-") {
		return ruleForwarded
	}
	return ruleKeep
}

// Response headers Forward removes (hop-by-hop, RFC 9110 §7.6.1) besides
// Connection and the headers it names. Upgrade stays on a 101.
var responseDrop = [...]string{
	fasthttp.HeaderKeepAlive, fasthttp.HeaderProxyConnection, fasthttp.HeaderTE, fasthttp.HeaderTrailer,
	fasthttp.HeaderTransferEncoding, fasthttp.HeaderProxyAuthenticate, HeaderComplete,
}

// rawHeader iterates the "name: value" lines of a raw header block.
type rawHeader struct {
	b []byte
}

// next returns the next header; ok is false at the end of the block. bad
// is true for a line no proxy should pass on: folded, without a colon or
// with an empty name.
func (r *rawHeader) next() (name, value []byte, ok, bad bool) {
	if len(r.b) == 0 {
		return nil, nil, false, false
	}
	i := bytes.IndexByte(r.b, '\n')
	var line []byte
	if i < 0 {
		line, r.b = r.b, nil
	} else {
		line, r.b = r.b[:i], r.b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		r.b = nil
		return nil, nil, false, false
	}
	if line[0] == ' ' || line[0] == '\t' {
		return nil, nil, false, true
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, false, true
	}
	return line[:colon], ascii.TrimOWS(line[colon+1:]), true, false
}

// listHas reports whether the comma-separated list holds token (ignoring
// case and optional whitespace).
func listHas[T string | []byte](list []byte, token T) bool {
	for len(list) > 0 {
		i := bytes.IndexByte(list, ',')
		var el []byte
		if i < 0 {
			el, list = list, nil
		} else {
			el, list = list[:i], list[i+1:]
		}
		if ascii.EqualFold(ascii.TrimOWS(el), token) {
			return true
		}
	}
	return false
}

// isStripped reports whether name is one of names, ignoring case and
// reading "_" as "-" (as many origins do).
func isStripped(name []byte, names [][]byte) bool {
	for _, n := range names {
		if len(n) != len(name) {
			continue
		}
		same := true
		for i, c := range name {
			d := n[i]
			if c == '_' {
				c = '-'
			}
			if d == '_' {
				d = '-'
			}
			if ascii.Lower(c) != ascii.Lower(d) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// appendCookies appends the Cookie header line with value's cookies less
// those named in strip; nothing when none is left.
func appendCookies(dst, name, value []byte, strip [][]byte) []byte {
	first := true
	for v := value; len(v) > 0; {
		i := bytes.IndexByte(v, ';')
		var pair []byte
		if i < 0 {
			pair, v = v, nil
		} else {
			pair, v = v[:i], v[i+1:]
		}
		pair = ascii.TrimOWS(pair)
		if len(pair) == 0 {
			continue
		}
		cname := pair
		if j := bytes.IndexByte(pair, '='); j >= 0 {
			cname = ascii.TrimOWS(pair[:j])
		}
		if isStripped(cname, strip) {
			continue
		}
		if first {
			dst = append(dst, name...)
			dst = append(dst, ": "...)
			first = false
		} else {
			dst = append(dst, "; "...)
		}
		dst = append(dst, pair...)
	}
	if !first {
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// appendHeader appends one "name: value" line.
func appendHeader[N string | []byte](dst []byte, name N, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}
