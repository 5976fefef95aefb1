package challenge

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// browserJoin is one join request as a minimal HTTPS server saw it.
type browserJoin struct {
	headers []Header
	ja4     string
}

// browserServer is an HTTPS server that keeps request headers in wire
// order (net/http does not) and the JA4 of each connection. It serves a
// page whose script joins like the waiting-room page does: a fetch()
// POST.
type browserServer struct {
	ln    net.Listener
	mu    sync.Mutex
	ja4   map[string]string // by client address
	joins chan browserJoin
}

const browserPage = `<!doctype html><title>join</title><script>
fetch("/join", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})
  .then(r => r.text()).then(() => { document.title = "joined" });
</script>`

func newBrowserServer(t *testing.T) *browserServer {
	t.Helper()
	s := &browserServer{ja4: map[string]string{}, joins: make(chan browserJoin, 4)}
	conf := &tls.Config{
		Certificates: []tls.Certificate{ja4TestCert(t, "localhost")},
		NextProtos:   []string{"http/1.1"},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			s.mu.Lock()
			s.ja4[h.Conn.RemoteAddr().String()] = JA4(h)
			s.mu.Unlock()
			return nil, nil
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln = tls.NewListener(ln, conf)
	t.Cleanup(func() { s.ln.Close() })
	go s.serve()
	return s
}

func (s *browserServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *browserServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.conn(c)
	}
}

func (s *browserServer) conn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		parts := strings.Fields(line)
		if len(parts) != 3 {
			return
		}
		var hs []Header
		length := 0
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			l = strings.TrimRight(l, "\r\n")
			if l == "" {
				break
			}
			name, value, _ := strings.Cut(l, ":")
			value = strings.TrimSpace(value)
			hs = append(hs, Header{Name: name, Value: value})
			if strings.EqualFold(name, "content-length") {
				length, _ = strconv.Atoi(value)
			}
		}
		if _, err := io.CopyN(io.Discard, br, int64(length)); err != nil {
			return
		}
		status, body := "404 Not Found", ""
		switch parts[1] {
		case "/":
			status, body = "200 OK", browserPage
		case "/join":
			s.mu.Lock()
			fp := s.ja4[c.RemoteAddr().String()]
			s.mu.Unlock()
			s.joins <- browserJoin{headers: hs, ja4: fp}
			status, body = "200 OK", "{}"
		}
		fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
	}
}

// A real Chromium joining over HTTPS: its JA4 has the cipher hash of
// FoxIO's worked example (which is Chromium's cipher list), and its
// headers pass every HeaderSignal rule except the headless one.
func TestBrowserChromiumJoin(t *testing.T) {
	srv := newBrowserServer(t)
	b := browsertest.Start(t)
	tab := b.NewTab(t)
	cctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
	defer cancel()
	if _, err := chromedp.Call(cctx, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true}); err != nil {
		t.Fatalf("ignoring the test certificate: %v", err)
	}
	browsertest.Navigate(t, tab, fmt.Sprintf("https://localhost:%d/", srv.port()))
	var join browserJoin
	select {
	case join = <-srv.joins:
	case <-time.After(browsertest.DefaultTimeout):
		t.Fatal("no join request from Chromium")
	}
	for _, h := range join.headers {
		t.Logf("%s: %s", h.Name, h.Value)
	}
	t.Logf("JA4: %s", join.ja4)

	// JA4.
	if !ValidJA4(join.ja4) {
		t.Fatalf("JA4 %q is not a fingerprint", join.ja4)
	}
	if !strings.HasPrefix(join.ja4, "t13d15") || join.ja4[8:10] != "h2" || join.ja4[11:23] != "8daaf6152771" {
		t.Errorf("JA4 %s, want t13d15…h2_8daaf6152771_… (Chromium: TLS 1.3, SNI, 15 ciphers, h2 first)", join.ja4)
	}

	// Headers: as sent, the headless browser gives itself away.
	sig, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Request{Headers: join.headers, JA4: join.ja4}
	f, _ := sig.Check(context.Background(), r)
	if f.Reason != ReasonUAHeadless || f.Suspicion != 1 {
		t.Errorf("headless Chromium: %+v, want %s", f, ReasonUAHeadless)
	}
	// With the User-Agent and brand list of headful Chrome, in the same
	// wire order, nothing is wrong: the rules fit a real Chromium.
	headful := &Request{}
	for _, h := range join.headers {
		h.Value = strings.ReplaceAll(h.Value, "HeadlessChrome", "Google Chrome")
		if strings.EqualFold(h.Name, "user-agent") {
			h.Value = strings.ReplaceAll(h.Value, "Google Chrome/", "Chrome/")
		}
		headful.Headers = append(headful.Headers, h)
	}
	if fs := sig.Findings(headful); len(fs) != 0 {
		t.Errorf("Chromium's own headers with a headful User-Agent: findings %+v, want none", fs)
	}
}
