package upstream

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http/httputil"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

type noDeadline struct{}

func (noDeadline) SetReadDeadline(time.Time) error { return nil }

// decodeChunked runs the response body decoder over in.
func decodeChunked(in []byte) ([]byte, error) {
	o := &Origin{cfg: Config{ReadTimeout: time.Second}, log: slog.New(slog.DiscardHandler)}
	b := &body{o: o, br: bufio.NewReaderSize(bytes.NewReader(in), 4096), conn: noDeadline{}, mode: modeChunked, reuse: true}
	return io.ReadAll(b)
}

// FuzzChunkedBody holds the chunked decoder of origin responses to Go's:
// whatever it accepts, net/http/httputil accepts with the same bytes.
func FuzzChunkedBody(f *testing.F) {
	for _, s := range []string{"5\r\nhello\r\n0\r\n\r\n", "5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", "zz\r\n",
		"5\nhello\r\n0\r\n\r\n", "fffffffffffffffff\r\n", "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "0\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := decodeChunked(in)
		if err != nil {
			return
		}
		want, werr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
		if werr != nil {
			t.Fatalf("%q: accepted, but Go's reader says %v", in, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: decoded %q, Go %q", in, got, want)
		}
	})
}

func TestChunkedBody(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"5\r\nhello\r\n0\r\n\r\n", "hello", true},
		{"5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n", "hello world", true},
		{"zz\r\nhello\r\n0\r\n\r\n", "", false},
		{"5\nhello\r\n0\r\n\r\n", "", false},
		{"5\r\nhelloXX0\r\n\r\n", "", false},
		{"1000000000000000\r\n", "", false},
		{"5\r\nhel", "", false},
		{"5 \r\nhello\r\n0\r\n\r\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := decodeChunked([]byte(tt.in))
			if (err == nil) != tt.ok || (tt.ok && string(got) != tt.want) {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

// FuzzRequestHead writes the origin's request head for arbitrary client
// headers: it always parses as one HTTP/1.1 request with waitroom's
// framing, and never carries a hop-by-hop header or a client's
// X-Waitroom-* or X-Forwarded-* header.
func FuzzRequestHead(f *testing.F) {
	f.Add("Cookie: a=1; wr_pass=x\r\nConnection: X-A\r\nX-A: 1\r\n")
	f.Add("X-Waitroom-Visitor: evil\r\nX-Forwarded-For: 1.2.3.4\r\nTE: trailers\r\n")
	f.Add("Content-Length: 0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n")
	f.Fuzz(func(t *testing.T, headers string) {
		var req fasthttp.Request
		br := bufio.NewReaderSize(strings.NewReader("POST /p HTTP/1.1\r\nHost: a\r\n"+headers+"\r\n"), 64<<10)
		if err := req.Header.Read(br); err != nil {
			return
		}
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, nil)
		x := &exchange{buf: make([]byte, 1024)}
		o := &Origin{cfg: Config{}}
		fw := &Forward{Target: []byte("/p"), ClientIP: netip.MustParseAddr("192.0.2.1"), Proto: "http", Visitor: []byte("v"),
			StripCookies: [][]byte{[]byte("wr_pass")}}
		if x.prepare(ctx, fw, 0) != nil {
			return
		}
		out := bytes.NewBuffer(o.appendHead(nil, ctx, fw, x, &member{addr: "origin:80"}))

		var got fasthttp.RequestHeader
		if err := got.Read(bufio.NewReaderSize(bytes.NewReader(out.Bytes()), 128<<10)); err != nil {
			t.Fatalf("unparsable head %q: %v", out.Bytes(), err)
		}
		if n := bytes.Count(out.Bytes(), []byte("\r\n\r\n")); n != 1 || !bytes.HasSuffix(out.Bytes(), []byte("\r\n\r\n")) {
			t.Fatalf("head %q does not end once", out.Bytes())
		}
		visitors := 0
		for k, v := range got.All() {
			switch rule := requestRule(k); {
			case ascii.EqualFold(k, "x-waitroom-visitor"):
				visitors++
				if string(v) != "v" {
					t.Fatalf("visitor %q", v)
				}
			case ascii.EqualFold(k, "content-length") || ascii.EqualFold(k, "transfer-encoding") || ascii.EqualFold(k, "host") ||
				ascii.EqualFold(k, "x-forwarded-for") || ascii.EqualFold(k, "x-forwarded-proto") || ascii.EqualFold(k, "x-forwarded-host") || ascii.EqualFold(k, "x-real-ip") ||
				ascii.EqualFold(k, "connection") && x.upgrade || ascii.EqualFold(k, "upgrade") && x.upgrade || ascii.EqualFold(k, "cookie"):
			case rule == ruleDrop || rule == ruleConnection || rule == ruleUpgrade || rule == ruleForwarded:
				t.Fatalf("header %q: %q reached the origin", k, v)
			}
			if ascii.EqualFold(k, "cookie") {
				for _, pair := range strings.Split(string(v), ";") {
					name, _, _ := strings.Cut(pair, "=")
					if strings.EqualFold(strings.TrimSpace(name), "wr_pass") {
						t.Fatalf("stripped cookie in %q", v)
					}
				}
			}
		}
		if visitors != 1 {
			t.Fatalf("%d visitor headers in %q", visitors, out.Bytes())
		}
		if got.ContentLength() > 0 {
			t.Fatalf("framing %d for a request whose body is empty", got.ContentLength())
		}
	})
}
