package upstream

import (
	"bufio"
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"
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
		if hasPrefixFold(name, "x-waitroom-") || hasPrefixFold(name, "x_waitroom_") {
			return ruleDrop
		}
		if hasPrefixFold(name, "x-forwarded-") {
			return ruleForwarded
		}
		if hasPrefixFold(name, "x_forwarded_") {
			return ruleDrop
		}
		return ruleKeep
	}
	canon, underscore := buf[:len(name)], false
	for i, c := range name {
		if c == '_' {
			c, underscore = '-', true
		}
		canon[i] = lower(c)
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
	if len(name) > len("x-waitroom-") && hasPrefixFold(name, "x-waitroom-") {
		return ruleDrop
	}
	switch len(name) {
	case 2:
		if equalFold(name, "te") {
			return ruleDrop
		}
	case 4:
		if equalFold(name, "host") {
			return ruleDrop
		}
	case 6:
		switch {
		case equalFold(name, "cookie"):
			return ruleCookie
		case equalFold(name, "expect"):
			return ruleDrop
		}
	case 7:
		switch {
		case equalFold(name, "upgrade"):
			return ruleUpgrade
		case equalFold(name, "trailer"):
			return ruleDrop
		}
	case 9:
		if equalFold(name, "forwarded") || equalFold(name, "x-real-ip") {
			return ruleDrop
		}
	case 11:
		if equalFold(name, "x-client-ip") {
			return ruleForwarded
		}
	case 13:
		if equalFold(name, "x-rewrite-url") {
			return ruleDrop
		}
	case 10:
		switch {
		case equalFold(name, "connection"):
			return ruleConnection
		case equalFold(name, "keep-alive"):
			return ruleDrop
		}
	case 14:
		switch {
		case equalFold(name, "content-length"), equalFold(name, "x-original-url"), equalFold(name, "x-original-uri"):
			return ruleDrop
		case equalFold(name, "true-client-ip"):
			return ruleForwarded
		}
	case 15:
		if equalFold(name, "x-forwarded-for") {
			return ruleXFF
		}
	case 16:
		switch {
		case equalFold(name, "proxy-connection"), equalFold(name, "x-forwarded-host"):
			return ruleDrop
		case equalFold(name, "cf-connecting-ip"):
			return ruleForwarded
		}
	case 17:
		if equalFold(name, "transfer-encoding") || equalFold(name, "x-forwarded-proto") || equalFold(name, "x-original-method") {
			return ruleDrop
		}
	case 18:
		if equalFold(name, "proxy-authenticate") {
			return ruleDrop
		}
	case 19:
		switch {
		case equalFold(name, "proxy-authorization"):
			return ruleDrop
		case equalFold(name, "x-cluster-client-ip"):
			return ruleForwarded
		}
	}
	if len(name) > len("x-forwarded-") && hasPrefixFold(name, "x-forwarded-") {
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
	i := indexByte(r.b, '\n')
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
	colon := indexByte(line, ':')
	if colon <= 0 {
		return nil, nil, false, true
	}
	return line[:colon], trimOWS(line[colon+1:]), true, false
}

// listHas reports whether the comma-separated list holds token (ignoring
// case and optional whitespace).
func listHas[T string | []byte](list []byte, token T) bool {
	for len(list) > 0 {
		i := indexByte(list, ',')
		var el []byte
		if i < 0 {
			el, list = list, nil
		} else {
			el, list = list[:i], list[i+1:]
		}
		if equalFold(trimOWS(el), token) {
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
			if lower(c) != lower(d) {
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

// writeCookies writes the Cookie header line with value's cookies less
// those named in strip; nothing when none is left.
func writeCookies(bw *bufio.Writer, name, value []byte, strip [][]byte) {
	first := true
	for v := value; len(v) > 0; {
		i := indexByte(v, ';')
		var pair []byte
		if i < 0 {
			pair, v = v, nil
		} else {
			pair, v = v[:i], v[i+1:]
		}
		pair = trimOWS(pair)
		if len(pair) == 0 {
			continue
		}
		cname := pair
		if j := indexByte(pair, '='); j >= 0 {
			cname = trimOWS(pair[:j])
		}
		if isStripped(cname, strip) {
			continue
		}
		if first {
			bw.Write(name)
			bw.WriteString(": ")
			first = false
		} else {
			bw.WriteString("; ")
		}
		bw.Write(pair)
	}
	if !first {
		bw.WriteString("\r\n")
	}
}

// writeHeader writes one "name: value" line.
func writeHeader(bw *bufio.Writer, name string, value []byte) {
	bw.WriteString(name)
	bw.WriteString(": ")
	bw.Write(value)
	bw.WriteString("\r\n")
}

func writeContentLength(bw *bufio.Writer, n int, scratch []byte) {
	bw.WriteString("Content-Length: ")
	bw.Write(strconv.AppendInt(scratch[:0], int64(n), 10))
	bw.WriteString("\r\n")
}

func indexByte(b []byte, c byte) int {
	return bytes.IndexByte(b, c)
}

func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether a and b are equal, ignoring ASCII case.
func equalFold[T string | []byte](a []byte, b T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && equalFold(b[:len(prefix)], prefix)
}
