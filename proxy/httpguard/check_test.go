package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestSmugglingShapes sends every request-smuggling shape over a raw TCP
// connection to a real fasthttp server configured like the proxy's front
// server, and checks the status, which layer refused it, and that the
// connection is closed after a refusal.
func TestSmugglingShapes(t *testing.T) {
	gs := startGuardServer(t)
	const get = "GET / HTTP/1.1\r\nHost: a\r\n"
	const post = "POST / HTTP/1.1\r\nHost: a\r\n"
	tests := []struct {
		name   string
		raw    string
		status int
		by     string // "ok", "parse", "check" or "body"
	}{
		{"plain get", get + "\r\n", 200, "ok"},
		{"content-length", post + "Content-Length: 5\r\n\r\nhello", 200, "ok"},
		{"chunked", post + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "ok"},
		{"chunked upper case", post + "Transfer-Encoding: CHUNKED\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "ok"},
		{"chunked with extension", post + "Transfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\n\r\n", 200, "ok"},

		{"cl then te", post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "check"},
		{"te then cl", post + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400, "check"},
		{"cl zero with te", post + "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "check"},
		{"te identity", post + "Transfer-Encoding: identity\r\n\r\n", 400, "check"},
		{"te identity with cl", post + "Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello", 400, "check"},
		{"te folded", post + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400, "check"},
		{"folded value", get + "X-A: one\r\n two\r\n\r\n", 400, "check"},
		{"folded with tab", get + "X-A: one\r\n\ttwo\r\n\r\n", 400, "check"},
		{"name with space", post + "Transfer Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello", 400, "check"},
		{"bare lf", "GET / HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n", 400, "check"},

		{"cl twice same", post + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400, "parse"},
		{"cl twice different", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400, "parse"},
		{"cl list", post + "Content-Length: 5, 5\r\n\r\nhello", 400, "parse"},
		{"cl plus", post + "Content-Length: +5\r\n\r\nhello", 400, "parse"},
		{"cl negative", post + "Content-Length: -1\r\n\r\n", 400, "parse"},
		{"cl hex", post + "Content-Length: 0x5\r\n\r\nhello", 400, "parse"},
		{"cl empty", post + "Content-Length: \r\n\r\n", 400, "parse"},
		{"cl letters", post + "Content-Length: abc\r\n\r\n", 400, "parse"},
		{"cl space before colon", post + "Content-Length : 5\r\n\r\nhello", 400, "parse"},
		{"te twice", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "parse"},
		{"te list", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400, "parse"},
		{"te unknown", post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400, "parse"},
		{"te in http/1.0", "POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "parse"},
		{"first line folded", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400, "parse"},
		{"no host", "GET / HTTP/1.1\r\nX-A: b\r\n\r\n", 400, "parse"},
		{"host twice", get + "Host: b\r\n\r\n", 400, "parse"},
		{"ctl in value", get + "X-A: a\x01b\r\n\r\n", 400, "parse"},

		{"chunk size not hex", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk size negative", post + "Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk size too long", post + "Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk size bare lf", post + "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk extension with lf", post + "Transfer-Encoding: chunked\r\n\r\n5;a\nb\r\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk data too long", post + "Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400, "body"},
		{"chunk size junk", post + "Transfer-Encoding: chunked\r\n\r\n5 x\r\nhello\r\n0\r\n\r\n", 400, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sendRaw(t, gs.addr, tt.raw, tt.status != 200)
			by, _, _ := strings.Cut(res.body, " ")
			if res.status != tt.status || by != tt.by {
				t.Fatalf("got %d %q, want %d from %q", res.status, res.body, tt.status, tt.by)
			}
			if tt.status != 200 && !res.closed {
				t.Fatal("the connection stayed open after a refused request")
			}
		})
	}
}

// TestSmuggledRequestNeverServed pipelines a second request behind each
// ambiguous framing: the server answers the first with 400, closes the
// connection, and never serves the hidden one.
func TestSmuggledRequestNeverServed(t *testing.T) {
	gs := startGuardServer(t)
	const hidden = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"
	tests := []struct{ name, raw string }{
		{"cl.te", "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden},
		{"te.cl", "POST /first HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n" + hidden},
		{"te folded", "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + hidden},
		{"cl.cl", "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n" + hidden},
		{"bad chunk", "POST /first HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + hidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sendRaw(t, gs.addr, tt.raw, true)
			if res.status != 400 || !res.closed {
				t.Fatalf("got %d (closed %v) %q, want 400 and a closed connection", res.status, res.closed, res.body)
			}
		})
	}
	for _, p := range gs.seen() {
		if p == "/smuggled" {
			t.Fatal("the smuggled request reached the handler")
		}
	}
}

// TestHeaderSizeBoundary: 16 KiB of cookies pass; a header block beyond
// the server's 32 KiB buffer is a 431.
func TestHeaderSizeBoundary(t *testing.T) {
	gs := startGuardServer(t)
	tests := []struct {
		name   string
		cookie int
		status int
	}{
		{"16 KiB of cookies", 16 << 10, 200},
		{"30 KiB of cookies", 30 << 10, 200},
		{"40 KiB of cookies", 40 << 10, 431},
		{"1 MiB of cookies", 1 << 20, 431},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := "GET / HTTP/1.1\r\nHost: a\r\n" + cookieHeader(tt.cookie) + "\r\n"
			res := sendRaw(t, gs.addr, raw, tt.status != 200)
			if res.status != tt.status {
				t.Fatalf("got %d %q, want %d", res.status, res.body, tt.status)
			}
			if tt.status == 431 && res.body != "parse "+CodeHeadersTooLarge {
				t.Fatalf("body %q", res.body)
			}
		})
	}
}

// TestCheck runs Check on headers parsed by fasthttp itself.
func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		head string
		want error
	}{
		{"plain", "Host: a\r\nX-A: b\r\n", nil},
		{"length", "Host: a\r\nContent-Length: 10\r\n", nil},
		{"chunked", "Host: a\r\nTransfer-Encoding: chunked\r\n", nil},
		{"optional whitespace", "Host: a\r\nContent-Length:\t10 \r\n", nil},
		{"both", "Host: a\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n", ErrLengthAndChunked},
		{"identity", "Host: a\r\nTransfer-Encoding: identity\r\n", ErrTransferEncoding},
		{"fold", "Host: a\r\nX-A: b\r\n c\r\n", ErrFolding},
		{"space in name", "Host: a\r\nX A: b\r\n", ErrMalformed},
		{"bare lf", "Host: a\nX-A: b\r\n", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h fasthttp.RequestHeader
			raw := "POST / HTTP/1.1\r\n" + tt.head + "\r\n"
			if err := h.Read(bufioReader(raw)); err != nil {
				t.Fatalf("fasthttp refused it: %v", err)
			}
			if err := Check(&h); !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("not parsed", func(t *testing.T) {
		var h fasthttp.RequestHeader
		h.Set("Content-Length", "5")
		if err := Check(&h); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"small buffer", fmt.Errorf("wrapped: %w", &fasthttp.ErrSmallBuffer{}), 431, CodeHeadersTooLarge},
		{"body too large", fasthttp.ErrBodyTooLarge, 413, CodePayloadTooLarge},
		{"timeout", fasthttp.ErrTimeout, 408, CodeRequestTimeout},
		{"duplicate length", fasthttp.ErrDuplicateContentLength, 400, CodeBadRequest},
		{"check", ErrLengthAndChunked, 400, CodeBadRequest},
		{"unexpected eof", io.ErrUnexpectedEOF, 400, CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := Classify(tt.err)
			if status != tt.status || code != tt.code {
				t.Fatalf("got %d %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
}

// TestUnreadBodyIsNotARequest: a handler that ignores a streamed body and
// closes the connection when HasBody keeps a request hidden in that body
// from being served as the next one.
func TestUnreadBodyIsNotARequest(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := &fasthttp.Server{StreamRequestBody: true, Logger: discardLogger{}, Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		paths = append(paths, string(ctx.Path()))
		mu.Unlock()
		if HasBody(&ctx.Request.Header) {
			ctx.SetConnectionClose()
		}
		ctx.SetBodyString("page")
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })

	hidden := "GET /hidden HTTP/1.1\r\nHost: a\r\n\r\n"
	tests := []struct{ name, head, body string }{
		// fasthttp pre-reads 8 KiB of a body; the rest stays on the wire.
		{"content-length", "Content-Length: " + strconv.Itoa(8192+len(hidden)), strings.Repeat("a", 8192) + hidden},
		{"chunked", "Transfer-Encoding: chunked", "5\r\nhello\r\n0\r\n\r\n" + hidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sendRaw(t, ln.Addr().String(), "POST /first HTTP/1.1\r\nHost: a\r\n"+tt.head+"\r\n\r\n"+tt.body, true)
			if res.status != 200 || !res.closed {
				t.Fatalf("got %d, closed %v", res.status, res.closed)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if p == "/hidden" {
			t.Fatal("a request hidden in an unread body was served")
		}
	}
}

func TestHasBody(t *testing.T) {
	tests := []struct {
		head string
		want bool
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n", true},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.head, func(t *testing.T) {
			var h fasthttp.RequestHeader
			if err := h.Read(bufioReader(tt.head)); err != nil {
				t.Fatal(err)
			}
			if got := HasBody(&h); got != tt.want {
				t.Fatalf("HasBody = %v", got)
			}
		})
	}
}
