package proxyproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
)

// v2 builds a v2 header: command byte, family byte, address block, TLVs.
func v2(verCmd, fam byte, block []byte, tlvs ...byte) []byte {
	b := append([]byte(nil), v2Sig...)
	b = append(b, verCmd, fam, 0, 0)
	binary.BigEndian.PutUint16(b[14:], uint16(len(block)+len(tlvs)))
	b = append(b, block...)
	return append(b, tlvs...)
}

func v4block(src, dst string, sp, dp uint16) []byte {
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	b := append(s[:], d[:]...)
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, sp), dp)
}

func v6block(src, dst string, sp, dp uint16) []byte {
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	b := append(s[:], d[:]...)
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, sp), dp)
}

// TestReadHeader is the attack table of the parser: each shape, what it
// yields, and that what follows the header is left unread.
func TestReadHeader(t *testing.T) {
	const rest = "GET / HTTP/1.1\r\n"
	tlv := []byte{0x04, 0x00, 0x03, 'a', 'b', 'c'} // PP2_TYPE_NOOP
	tests := []struct {
		name    string
		in      []byte
		src     string // "" for the zero AddrPort
		wantErr error  // nil, ErrNoHeader, ErrMalformed, or io.ErrUnexpectedEOF for "a read error"
	}{
		{"v1 tcp4", []byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"), "192.0.2.1:56324", nil},
		{"v1 tcp6", []byte("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n"), "[2001:db8::1]:1", nil},
		{"v1 tcp6 mapped", []byte("PROXY TCP6 ::ffff:192.0.2.1 ::1 1 2\r\n"), "[::ffff:192.0.2.1]:1", nil},
		{"v1 port 0", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 0 0\r\n"), "192.0.2.1:0", nil},
		{"v1 unknown", []byte("PROXY UNKNOWN\r\n"), "", nil},
		{"v1 unknown with junk", []byte("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), "", nil},
		{"v1 longest", []byte("PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"), "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", nil},

		{"http request", []byte("GET / HTTP/1.1\r\n"), "", ErrNoHeader},
		{"starts with P", []byte("POST / HTTP/1.1\r\n"), "", ErrNoHeader},
		{"lowercase", []byte("proxy TCP4 192.0.2.1 192.0.2.2 1 2\r\n"), "", ErrNoHeader},
		{"tls hello", []byte("\x16\x03\x01\x00\xa5"), "", ErrNoHeader},
		{"v1 bare LF", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 1 2\n"), "", ErrMalformed},
		{"v1 double space", []byte("PROXY TCP4  192.0.2.1 192.0.2.2 1 2\r\n"), "", ErrMalformed},
		{"v1 trailing space", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 1 2 \r\n"), "", ErrMalformed},
		{"v1 tab", []byte("PROXY TCP4\t192.0.2.1 192.0.2.2 1 2\r\n"), "", ErrMalformed},
		{"v1 family mismatch 4", []byte("PROXY TCP4 2001:db8::1 192.0.2.2 1 2\r\n"), "", ErrMalformed},
		{"v1 family mismatch 6", []byte("PROXY TCP6 192.0.2.1 2001:db8::2 1 2\r\n"), "", ErrMalformed},
		{"v1 udp", []byte("PROXY UDP4 192.0.2.1 192.0.2.2 1 2\r\n"), "", ErrMalformed},
		{"v1 zone", []byte("PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n"), "", ErrMalformed},
		{"v1 leading zero ip", []byte("PROXY TCP4 192.0.2.01 192.0.2.2 1 2\r\n"), "", ErrMalformed},
		{"v1 port too big", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 65536 2\r\n"), "", ErrMalformed},
		{"v1 port leading zero", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 080 2\r\n"), "", ErrMalformed},
		{"v1 port sign", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 +80 2\r\n"), "", ErrMalformed},
		{"v1 missing port", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 80\r\n"), "", ErrMalformed},
		{"v1 extra field", []byte("PROXY TCP4 192.0.2.1 192.0.2.2 80 81 82\r\n"), "", ErrMalformed},
		{"v1 hostname", []byte("PROXY TCP4 localhost 192.0.2.2 80 81\r\n"), "", ErrMalformed},
		{"v1 CR inside", []byte("PROXY TCP4 192.0.2.1\r192.0.2.2 80 81\r\n"), "", ErrMalformed},
		{"v1 too long", []byte("PROXY UNKNOWN " + strings.Repeat("a", 100) + "\r\n"), "", ErrMalformed},
		{"v1 no end", []byte("PROXY TCP4 192.0.2.1"), "", io.ErrUnexpectedEOF},
		{"v1 nothing", nil, "", io.ErrUnexpectedEOF},

		{"v2 tcp4", v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 56324, 443)), "192.0.2.1:56324", nil},
		{"v2 tcp6", v2(0x21, 0x21, v6block("2001:db8::1", "2001:db8::2", 7, 443)), "[2001:db8::1]:7", nil},
		{"v2 tcp4 tlv", v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2), tlv...), "192.0.2.1:1", nil},
		{"v2 local", v2(0x20, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", nil},
		{"v2 local unspec", v2(0x20, 0x00, nil), "", nil},
		{"v2 local udp", v2(0x20, 0x12, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", nil},
		{"v2 proxy unspec", v2(0x21, 0x00, nil, tlv...), "", nil},
		{"v2 unix", v2(0x21, 0x31, make([]byte, 216)), "", nil},

		{"v2 version 1", v2(0x11, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 version 3", v2(0x31, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 command 2", v2(0x22, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 udp", v2(0x21, 0x12, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 family 4", v2(0x21, 0x41, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 short block", v2(0x21, 0x21, v4block("192.0.2.1", "198.51.100.2", 1, 2)), "", ErrMalformed},
		{"v2 bad signature", append([]byte("\r\n\r\n\x00\r\nQUIX\n"), 0x21, 0x11, 0, 0), "", ErrNoHeader},
		{"v2 too long", func() []byte {
			b := v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2))
			binary.BigEndian.PutUint16(b[14:], MaxV2Length+1)
			return b
		}(), "", ErrMalformed},
		{"v2 length beyond data", func() []byte {
			b := v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2))
			binary.BigEndian.PutUint16(b[14:], 100)
			return b
		}(), "", io.ErrUnexpectedEOF},
		{"v2 truncated signature", v2Sig[:7], "", io.ErrUnexpectedEOF},
		{"v2 truncated block", v2(0x21, 0x21, v6block("::1", "::2", 1, 2))[:30], "", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append(append([]byte(nil), tt.in...), rest...)
			if tt.wantErr == io.ErrUnexpectedEOF {
				in = tt.in // the stream ends inside the header
			}
			r := bufio.NewReaderSize(bytes.NewReader(in), BufferSize)
			h, err := ReadHeader(r)
			switch {
			case tt.wantErr == io.ErrUnexpectedEOF:
				if err == nil || errors.Is(err, ErrMalformed) || errors.Is(err, ErrNoHeader) {
					t.Fatalf("err = %v, want a read error", err)
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("err = %v", err)
			}
			var want netip.AddrPort
			if tt.src != "" {
				want = netip.MustParseAddrPort(tt.src)
			}
			if h.Source != want {
				t.Fatalf("source %v, want %v", h.Source, want)
			}
			left, _ := io.ReadAll(r)
			if string(left) != rest {
				t.Fatalf("left unread %q, want %q", left, rest)
			}
		})
	}
}

// FuzzReadHeader: no panic; an accepted header is consumed exactly (what
// follows it stays unread), a v1 one is at most 107 bytes ending in CRLF,
// a v2 one is 16 bytes plus its length, and a source is a real address.
func FuzzReadHeader(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"))
	f.Add([]byte("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)))
	f.Add(v2(0x21, 0x21, v6block("2001:db8::1", "2001:db8::2", 7, 443), 4, 0, 1, 0))
	f.Add(v2(0x20, 0x00, nil))
	f.Add(v2(0x21, 0x31, make([]byte, 216)))
	f.Fuzz(func(t *testing.T, in []byte) {
		const tail = "\x00TAIL"
		data := append(append([]byte(nil), in...), tail...)
		r := bufio.NewReaderSize(bytes.NewReader(data), BufferSize)
		h, err := ReadHeader(r)
		if err != nil {
			return
		}
		left, _ := io.ReadAll(r)
		n := len(data) - len(left)
		switch h.Version {
		case 1:
			// The first LF ends a v1 header: nothing after it is read.
			if n > maxV1 || n != bytes.IndexByte(data, '\n')+1 || !bytes.HasSuffix(data[:n], []byte("\r\n")) || !bytes.HasPrefix(data, []byte("PROXY ")) {
				t.Fatalf("%q: v1 header of %d bytes accepted", in, n)
			}
		case 2:
			if n != 16+int(binary.BigEndian.Uint16(data[14:16])) || !bytes.HasPrefix(data, v2Sig) {
				t.Fatalf("%q: v2 header of %d bytes accepted", in, n)
			}
		default:
			t.Fatalf("%q: version %d", in, h.Version)
		}
		if h.Source.IsValid() != h.Destination.IsValid() || h.Source.Addr().Zone() != "" {
			t.Fatalf("%q: source %v destination %v", in, h.Source, h.Destination)
		}
	})
}

// TestReadHeaderTLS: the PP2_TYPE_SSL TLV's client bit says the client
// spoke TLS to the balancer; TLVs that do not fill the length exactly are
// malformed.
func TestReadHeaderTLS(t *testing.T) {
	block := v4block("192.0.2.1", "198.51.100.2", 1, 2)
	ssl := func(client byte, sub ...byte) []byte {
		v := append([]byte{client, 0, 0, 0, 0}, sub...)
		return append([]byte{0x20, byte(len(v) >> 8), byte(len(v))}, v...)
	}
	noop := []byte{0x04, 0x00, 0x02, 'x', 'y'}
	tests := []struct {
		name    string
		in      []byte
		tls     bool
		wantErr error
	}{
		{"ssl client", v2(0x21, 0x11, block, ssl(0x01)...), true, nil},
		{"ssl client with sub-tlvs", v2(0x21, 0x11, block, append(noop, ssl(0x07, 0x21, 0x00, 0x07, 'T', 'L', 'S', 'v', '1', '.', '3')...)...), true, nil},
		{"ssl not client", v2(0x21, 0x11, block, ssl(0x00)...), false, nil},
		{"no ssl tlv", v2(0x21, 0x11, block, noop...), false, nil},
		{"local ignores ssl", v2(0x20, 0x11, block, ssl(0x01)...), false, nil},
		{"ssl too short", v2(0x21, 0x11, block, 0x20, 0x00, 0x01, 0x01), false, ErrMalformed},
		{"tlv overruns", v2(0x21, 0x11, block, 0x04, 0x00, 0x09, 'x'), false, ErrMalformed},
		{"tlv header cut", v2(0x21, 0x11, block, 0x04, 0x00), false, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ReadHeader(bufio.NewReaderSize(bytes.NewReader(append(tt.in, "GET"...)), BufferSize))
			if !errors.Is(err, tt.wantErr) || (err == nil && h.TLS != tt.tls) {
				t.Fatalf("TLS %v, err %v; want %v, %v", h.TLS, err, tt.tls, tt.wantErr)
			}
		})
	}
}
