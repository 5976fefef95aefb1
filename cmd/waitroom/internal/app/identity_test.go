package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// TestProxyProtocol runs serve with serve.proxy_protocol behind a
// "balancer" on loopback: the PROXY header's source is the client that
// bypass cidrs see, an X-Forwarded-For from that (untrusted) client is
// ignored, and connections without a header are closed.
func TestProxyProtocol(t *testing.T) {
	d := startDemo(t, 0, time.Hour, func(c *config.Config) {
		c.Serve.TrustedProxies = []string{"127.0.0.1/32"}
		c.Serve.ProxyProtocol = true
		c.Serve.Bypass.CIDRs = []string{"203.0.113.0/24"}
	})
	u, err := url.Parse(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	get := func(t *testing.T, header, extra string) (int, error) {
		t.Helper()
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, header+"GET /events/demo-concert HTTP/1.1\r\nHost: "+u.Host+"\r\n"+extra+"Connection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	bypassed := func(t *testing.T) float64 {
		t.Helper()
		return metricValue(t, metrics(t, d), `waitroom_bypass_total{via="cidr"}`)
	}

	if _, err := get(t, "", ""); err == nil {
		t.Fatal("a connection without a PROXY header was answered")
	}
	if _, err := get(t, "PROXY TCP4 203.0.113.5 127.0.0.1 4000 80\r", ""); err == nil {
		t.Fatal("a connection with a malformed PROXY header was answered")
	}

	// The untrusted client the header names spoofs a bypass address.
	if _, err := get(t, "PROXY TCP4 198.51.100.7 127.0.0.1 4000 80\r\n", "X-Forwarded-For: 203.0.113.5\r\nX-Real-IP: 203.0.113.5\r\n"); err != nil {
		t.Fatal(err)
	}
	if n := bypassed(t); n != 0 {
		t.Fatalf("a spoofed X-Forwarded-For behind the PROXY header bypassed the queue (%v)", n)
	}
	// The client the header names is in the bypass network.
	for _, h := range []string{"PROXY TCP4 203.0.113.5 127.0.0.1 4000 80\r\n", string(v2Header(t, "203.0.113.6"))} {
		if _, err := get(t, h, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := bypassed(t); n != 2 {
		t.Fatalf("bypassed %v times, want 2 (v1 and v2 clients in the bypass network)", n)
	}
	m := metrics(t, d)
	for result, want := range map[string]float64{"accepted": 3, "malformed": 2, "untrusted": 0} {
		if got := metricValue(t, m, `waitroom_proxy_protocol_connections_total{result="`+result+`"}`); got != want {
			t.Errorf("%s connections: %v, want %v", result, got, want)
		}
	}
}

// v2Header is a PROXY v2 header for a TCP over IPv4 client.
func v2Header(t *testing.T, src string) []byte {
	t.Helper()
	ip := net.ParseIP(src).To4()
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c")
	b = append(b, ip...)
	b = append(b, 127, 0, 0, 1, 0x0f, 0xa0, 0, 80)
	return b
}

// metricValue finds one sample in a Prometheus text exposition (0 when
// absent).
func metricValue(t *testing.T, text, sample string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
