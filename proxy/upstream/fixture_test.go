package upstream

import (
	"bufio"
	"bytes"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// smallGET is a browser-like GET with cookies, one of them waitroom's.
const smallGET = "GET /events/summer/seats?section=A HTTP/1.1\r\n" +
	"Host: shop.example\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-GB,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=0123456789abcdef; wr_pass=eyJhbGciOiJFZERTQSJ9.payload.signature; theme=dark\r\n" +
	"\r\n"

var smallBody = []byte("<html><body>seat map</body></html>")

// smallOrigin starts an origin answering every request with smallBody.
func smallOrigin(tb testing.TB) string {
	return origin(tb, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/html; charset=utf-8")
		ctx.SetBody(smallBody)
	})
}

// forwardFixture is one request context, parsed from the wire as the
// front server would, forwarded again and again.
type forwardFixture struct {
	tb  testing.TB
	o   *Origin
	ctx *fasthttp.RequestCtx
	fw  Forward
}

func newForwardFixture(tb testing.TB, o *Origin) *forwardFixture {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(smallGET))); err != nil {
		tb.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(198, 51, 100, 7), Port: 40000}, nil)
	return &forwardFixture{tb: tb, o: o, ctx: ctx, fw: Forward{
		Target:       append([]byte(nil), req.Header.RequestURI()...),
		ClientIP:     netip.MustParseAddr("198.51.100.7"),
		Proto:        "https",
		Host:         []byte("shop.example"),
		Visitor:      []byte("01J9Z3V6Q8Y0WAITROOMVISITOR"),
		Event:        []byte("summer"),
		StripCookies: [][]byte{[]byte("wr_pass"), []byte("wr_ticket")},
	}}
}

func (f *forwardFixture) run() {
	f.ctx.Response.Reset()
	out := f.o.Forward(f.ctx, &f.fw)
	if out.Err != nil || out.Status != 200 || !bytes.Equal(f.ctx.Response.Body(), smallBody) {
		f.tb.Fatalf("outcome %+v, body %q", out, f.ctx.Response.Body())
	}
}
