package proxyproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
)

// Header is a parsed PROXY protocol header.
type Header struct {
	// Version is 1 (text) or 2 (binary).
	Version int
	// Source and Destination are the client's and the balancer's
	// addresses as the balancer saw them. Both are the zero AddrPort when
	// the connection's own addresses stand (a LOCAL command, an UNKNOWN,
	// AF_UNSPEC or AF_UNIX address).
	Source, Destination netip.AddrPort
	// TLS is true when a v2 header says the client reached the balancer
	// over TLS (a PP2_TYPE_SSL TLV with the PP2_CLIENT_SSL bit), for a
	// balancer that terminates TLS itself.
	TLS bool
}

// Errors of ReadHeader. Anything else it returns comes from the reader
// (a timeout, a closed connection, io.EOF, io.ErrUnexpectedEOF).
var (
	// ErrNoHeader: the connection does not start with a PROXY header.
	ErrNoHeader = errors.New("proxyproto: no PROXY protocol header")
	// ErrMalformed: the header starts like one but breaks the format.
	ErrMalformed = errors.New("proxyproto: malformed PROXY protocol header")
)

const (
	// maxV1 is the longest v1 header, CRLF included (the spec's 107).
	maxV1 = 107
	// MaxV2Length is the longest v2 address block plus TLVs read (the
	// 16-bit length field allows 65535); a balancer's TLVs (AWS VPC
	// endpoint, Azure link id, TLS details) fit with room to spare.
	MaxV2Length = 4096
	// BufferSize is what the reader given to ReadHeader must buffer at
	// least: the 16-byte v2 prefix and the largest address block (216,
	// AF_UNIX), or the v1 line.
	BufferSize = 256
)

var (
	v1Prefix = []byte("PROXY ")
	v2Sig    = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// ReadHeader reads one PROXY header, v1 or v2, from r and nothing after
// it. r must buffer at least BufferSize bytes. It does not time out by
// itself: set a deadline on the connection beneath.
func ReadHeader(r *bufio.Reader) (Header, error) {
	if r.Size() < BufferSize {
		return Header{}, errors.New("proxyproto: reader buffer too small")
	}
	first, err := r.Peek(1)
	if err != nil {
		return Header{}, err
	}
	switch first[0] {
	case 'P':
		return readV1(r)
	case '\r':
		return readV2(r)
	}
	return Header{}, ErrNoHeader
}

// readV1 reads "PROXY TCP4|TCP6|UNKNOWN src dst sport dport\r\n": single
// spaces, addresses of the named family, decimal ports 0 to 65535 without
// leading zeros. After UNKNOWN anything up to CRLF is ignored.
func readV1(r *bufio.Reader) (Header, error) {
	p, err := r.Peek(len(v1Prefix))
	if err != nil {
		return Header{}, err
	}
	if !bytes.Equal(p, v1Prefix) {
		return Header{}, ErrNoHeader
	}
	// Look for the LF within the longest header only.
	var line []byte
	for n := len(v1Prefix) + 1; ; n++ {
		if n > maxV1 {
			return Header{}, ErrMalformed
		}
		b, err := r.Peek(n)
		if err != nil {
			return Header{}, err
		}
		if b[n-1] == '\n' {
			line = b
			break
		}
	}
	h, ok := parseV1(line)
	if _, err := r.Discard(len(line)); err != nil {
		return Header{}, err
	}
	if !ok {
		return Header{}, ErrMalformed
	}
	return h, nil
}

// parseV1 parses a whole v1 line, CRLF included.
func parseV1(line []byte) (Header, bool) {
	h := Header{Version: 1}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return h, false
	}
	rest := line[len(v1Prefix) : len(line)-2]
	if bytes.IndexByte(rest, '\r') >= 0 || bytes.IndexByte(rest, '\n') >= 0 {
		return h, false
	}
	proto, rest, _ := bytes.Cut(rest, []byte(" "))
	var v6 bool
	switch string(proto) {
	case "UNKNOWN":
		return h, true
	case "TCP4":
	case "TCP6":
		v6 = true
	default:
		return h, false
	}
	f := bytes.Split(rest, []byte(" "))
	if len(f) != 4 {
		return h, false
	}
	src, ok1 := parseV1Addr(f[0], v6)
	dst, ok2 := parseV1Addr(f[1], v6)
	sp, ok3 := parsePort(f[2])
	dp, ok4 := parsePort(f[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return h, false
	}
	h.Source, h.Destination = netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp)
	return h, true
}

func parseV1Addr(b []byte, v6 bool) (netip.Addr, bool) {
	if len(b) == 0 || len(b) > 45 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(string(b))
	if err != nil || a.Zone() != "" || a.Is6() != v6 {
		return netip.Addr{}, false
	}
	return a, true
}

func parsePort(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// readV2 reads the binary header: the 12-byte signature, version 2 and a
// command (LOCAL or PROXY), the family and transport, the length, the
// address block and TLVs (skipped).
func readV2(r *bufio.Reader) (Header, error) {
	p, err := r.Peek(16)
	if err != nil {
		if err2 := matchPrefix(r, v2Sig); err2 != nil {
			return Header{}, err2
		}
		return Header{}, err
	}
	if !bytes.Equal(p[:12], v2Sig) {
		return Header{}, ErrNoHeader
	}
	h := Header{Version: 2}
	verCmd, fam := p[12], p[13]
	n := int(binary.BigEndian.Uint16(p[14:16]))
	if verCmd>>4 != 2 || n > MaxV2Length {
		return h, ErrMalformed
	}
	switch verCmd & 0x0f {
	case 0x0:
		// LOCAL: the balancer's own connection (a health check); the
		// block, whatever its family, is skipped.
		if _, err := r.Discard(16 + n); err != nil {
			return Header{Version: 2}, err
		}
		return h, nil
	case 0x1:
	default:
		return h, ErrMalformed
	}
	var need int
	switch fam {
	case 0x00: // AF_UNSPEC
	case 0x11: // TCP over IPv4
		need = 12
	case 0x21: // TCP over IPv6
		need = 36
	case 0x31, 0x32: // AF_UNIX stream or datagram
		need = 216
	default: // UDP, unknown families and transports
		return h, ErrMalformed
	}
	if n < need {
		return h, ErrMalformed
	}
	if _, err := r.Discard(16); err != nil {
		return h, err
	}
	block, err := r.Peek(need)
	if err != nil {
		return h, err
	}
	switch fam {
	case 0x11:
		h.Source = netip.AddrPortFrom(netip.AddrFrom4([4]byte(block[0:4])), binary.BigEndian.Uint16(block[8:10]))
		h.Destination = netip.AddrPortFrom(netip.AddrFrom4([4]byte(block[4:8])), binary.BigEndian.Uint16(block[10:12]))
	case 0x21:
		h.Source = netip.AddrPortFrom(netip.AddrFrom16([16]byte(block[0:16])), binary.BigEndian.Uint16(block[32:34]))
		h.Destination = netip.AddrPortFrom(netip.AddrFrom16([16]byte(block[16:32])), binary.BigEndian.Uint16(block[34:36]))
	}
	if _, err := r.Discard(need); err != nil {
		return Header{Version: 2}, err
	}
	if h.TLS, err = readTLVs(r, n-need); err != nil {
		return Header{Version: 2}, err
	}
	return h, nil
}

// TLV types and bits read (the others are skipped).
const (
	pp2TypeSSL   = 0x20
	pp2ClientSSL = 0x01
)

// readTLVs consumes the n bytes of TLVs after the address block: each a
// type byte, a 16-bit length and that many bytes, exactly filling n. It
// reports whether a PP2_TYPE_SSL TLV has the PP2_CLIENT_SSL bit.
func readTLVs(r *bufio.Reader, n int) (tls bool, err error) {
	for n > 0 {
		if n < 3 {
			return false, ErrMalformed
		}
		p, err := r.Peek(3)
		if err != nil {
			return false, err
		}
		typ, l := p[0], int(binary.BigEndian.Uint16(p[1:3]))
		if 3+l > n {
			return false, ErrMalformed
		}
		if _, err := r.Discard(3); err != nil {
			return false, err
		}
		if typ == pp2TypeSSL {
			if l < 5 { // client (1) and verify (4), then sub-TLVs
				return false, ErrMalformed
			}
			v, err := r.Peek(1)
			if err != nil {
				return false, err
			}
			tls = v[0]&pp2ClientSSL != 0
		}
		if _, err := r.Discard(l); err != nil {
			return false, err
		}
		n -= 3 + l
	}
	return tls, nil
}

// matchPrefix tells a short read of something that is not a v2 header
// (ErrNoHeader) from a short read of one (nil: the caller reports the
// read error).
func matchPrefix(r *bufio.Reader, sig []byte) error {
	b, _ := r.Peek(r.Buffered())
	if len(b) > len(sig) {
		b = b[:len(sig)]
	}
	if !bytes.Equal(b, sig[:len(b)]) {
		return ErrNoHeader
	}
	return nil
}
