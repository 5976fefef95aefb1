package httpguard

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// guardServer is a real fasthttp server configured as the proxy's front
// server is (streamed request bodies, a 32 KiB header buffer) that runs
// Check first, then reads the whole body. Its answers say which layer
// decided: "parse" (fasthttp's parser, via the ErrorHandler and Classify),
// "check" (Check), "body" (reading the streamed body failed) or "ok".
type guardServer struct {
	addr string

	mu    sync.Mutex
	paths []string
}

func startGuardServer(t *testing.T) *guardServer {
	t.Helper()
	gs := &guardServer{}
	srv := &fasthttp.Server{
		Handler:                       gs.handle,
		ErrorHandler:                  gs.parseError,
		StreamRequestBody:             true,
		ReadBufferSize:                32 << 10,
		DisableHeaderNamesNormalizing: false,
		NoDefaultServerHeader:         true,
		DisablePreParseMultipartForm:  true,
		ReadTimeout:                   5 * time.Second,
		WriteTimeout:                  5 * time.Second,
		Logger:                        discardLogger{},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs.addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
	})
	return gs
}

func (gs *guardServer) handle(ctx *fasthttp.RequestCtx) {
	gs.mu.Lock()
	gs.paths = append(gs.paths, string(ctx.Path()))
	gs.mu.Unlock()
	if err := Check(&ctx.Request.Header); err != nil {
		ctx.SetConnectionClose()
		status, code := Classify(err)
		answer(ctx, status, "check", code)
		return
	}
	n := 0
	if r := ctx.RequestBodyStream(); r != nil {
		m, err := io.Copy(io.Discard, r)
		if err != nil {
			ctx.SetConnectionClose()
			status, code := Classify(err)
			answer(ctx, status, "body", code)
			return
		}
		n = int(m)
	} else {
		n = len(ctx.Request.Body())
	}
	answer(ctx, fasthttp.StatusOK, "ok", strconv.Itoa(n))
}

func (gs *guardServer) parseError(ctx *fasthttp.RequestCtx, err error) {
	status, code := Classify(err)
	answer(ctx, status, "parse", code)
}

func (gs *guardServer) seen() []string {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return append([]string(nil), gs.paths...)
}

func answer(ctx *fasthttp.RequestCtx, status int, by, detail string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain")
	ctx.SetBodyString(by + " " + detail)
}

// rawResult is what came back for one raw request.
type rawResult struct {
	status int
	body   string
	closed bool // the server closed the connection after the answer
}

// sendRaw writes raw to a new connection and reads one response; with
// checkClosed, it then waits for the server to close the connection (an
// open connection fails the read only at the 5 s deadline).
func sendRaw(t *testing.T, addr, raw string, checkClosed bool) rawResult {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	// The request is written while the answer is read: a server that
	// refuses a request (checkClosed) may answer and close before it has
	// read it all, and the rest of the write then meets a reset. Only a
	// request the server should read whole must be written whole.
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, raw)
		wrote <- err
	}()
	defer func() {
		if err := <-wrote; err != nil && !checkClosed {
			t.Fatalf("writing the request: %v", err)
		}
	}()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the response body: %v", err)
	}
	res := rawResult{status: resp.StatusCode, body: string(b)}
	if checkClosed {
		var one [1]byte
		_, err = br.Read(one[:])
		var ne net.Error
		res.closed = err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}
	return res
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// cookieHeader returns a Cookie header line of about n bytes.
func cookieHeader(n int) string {
	var b strings.Builder
	b.WriteString("Cookie: ")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("c")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("=")
		b.WriteString(strings.Repeat("v", 90))
	}
	b.WriteString("\r\n")
	return b.String()
}

func bufioReader(s string) *bufio.Reader {
	return bufio.NewReaderSize(strings.NewReader(s), 64<<10)
}
