package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/haproxytest"
)

// haproxyServe is the replica behind HAProxy: PROXY protocol from
// 127.0.0.1 (HAProxy) only, cookies Secure when the PROXY header says
// TLS, a small per-address API budget and a wide per-network one, so
// that a test sees which address the limit counts.
const haproxyServe = `
log: {level: error}
serve:
  listen: 127.0.0.1:0
  proxy_protocol: true
  trusted_proxies: [127.0.0.1/32]
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: auto}
  rate_limits:
    per_ip: {rate: 0.5, burst: 12}
    per_prefix: {rate: 1000, burst: 1000}
  shutdown_grace: 1s
admin:
  listen: 127.0.0.1:0
  token: haproxy-test-admin-token
admission:
  data_dir: %[2]s
origins:
  - name: shop
    addresses: [%[3]s]
    health_check: {disabled: true}
routes:
  - prefix: /show/
    event: show
events:
  - id: show
    on_sale_at: %[4]s
    landing_path: /show/
`

// TestBehindHAProxy runs the shipped configs/haproxy.cfg, pointed at one
// replica on loopback, with TLS and HTTP/2 to the visitors: HAProxy's
// HTTP check of /readyz passes, a gated path without a pass never
// reaches the origin, a visitor joins, is admitted and reaches it, and
// everything that counts by client address (device binding, rate
// limits, X-Forwarded-For to the origin, the Secure cookie from the
// PROXY header's TLS flag) sees the visitor's own address, never
// HAProxy's. Visitors come from their own loopback addresses in other
// /24 networks than HAProxy's 127.0.0.1.
func TestBehindHAProxy(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{} // gated path → X-Forwarded-For of each request
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.Header.Get("X-Forwarded-For"))
		mu.Unlock()
		fmt.Fprint(w, "origin:"+r.URL.Path)
	}))
	defer origin.Close()
	originSaw := func(path string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen[path]...)
	}

	w, _, stop := runServe(t, fmt.Sprintf(haproxyServe, netguardSecret(), t.TempDir(),
		strings.TrimPrefix(origin.URL, "http://"), onSale()))
	defer stop()

	dir := t.TempDir()
	pemFile, roots := selfSigned(t, dir)
	shipped, err := os.ReadFile("../../../../configs/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	_, adminPort, _ := net.SplitHostPort(w.AdminAddr().String())
	hp := haproxytest.Start(t, haproxytest.Options{Dir: dir, Config: func(listen, stats string) string {
		cfg := string(shipped)
		for _, r := range []struct{ old, new string }{
			{"log /dev/log local0", "log stderr format raw local0"},
			{"maxconn 200000", "maxconn 2000"},
			{"\tbind :80\n", ""},
			{"bind :443 ssl crt /etc/haproxy/certs/shop.example.com.pem", "bind " + listen + " ssl crt " + pemFile},
			{"check port 9090 inter 2s", "check port " + adminPort + " inter 100ms"},
			{"server wr1 10.0.0.11:8080", "server wr1 " + w.Addr().String()},
			{"\tserver wr2 10.0.0.12:8080\n", ""},
			{"\tserver wr3 10.0.0.13:8080\n", ""},
		} {
			if strings.Count(cfg, r.old) != 1 {
				t.Fatalf("configs/haproxy.cfg no longer has %q once", r.old)
			}
			cfg = strings.Replace(cfg, r.old, r.new, 1)
		}
		return cfg + "\nfrontend stats\n\tbind " + stats + "\n\tstats enable\n\tstats uri /stats\n"
	}})
	base := "https://" + hp.Addr

	// The check: HTTP, to the admin listener's /readyz.
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := hp.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if len(st) == 1 && st[0].Status == "UP" && st[0].Check == "L7OK" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy's check of /readyz: %+v\n%s", st, hp.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A visitor from 127.0.1.2, over HTTP/2.
	a := newLoopbackVisitor(t, "127.0.1.2", roots)
	resp, body := a.get(t, base+"/show/seats")
	if resp.ProtoMajor != 2 {
		t.Fatalf("HAProxy spoke %s to the visitor, want HTTP/2", resp.Proto)
	}
	if strings.HasPrefix(body, "origin:") || len(originSaw("/show/seats")) != 0 {
		t.Fatalf("a gated path without a pass reached the origin: %d %q", resp.StatusCode, body)
	}
	if resp, body := a.post(t, base+"/_wr/api/join", `{"event":"show"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("join through HAProxy: %d %s", resp.StatusCode, body)
	}
	var pass *http.Cookie
	for deadline := time.Now().Add(60 * time.Second); pass == nil; {
		resp, body := a.get(t, base+"/_wr/api/status?event=show")
		var st struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("status through HAProxy: %d %s", resp.StatusCode, body)
		}
		for _, c := range resp.Cookies() {
			if c.Name == "wr_pass_show" {
				pass = c
			}
		}
		if pass == nil && st.Status == "admitted" {
			t.Fatal("admitted without a pass cookie")
		}
		if time.Now().After(deadline) {
			t.Fatalf("not admitted within 60 s: %s", body)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !pass.Secure {
		t.Error("the pass cookie is not Secure: the PROXY header's TLS flag was not taken")
	}
	if _, body := a.get(t, base+"/show/seats"); body != "origin:/show/seats" {
		t.Fatalf("the admitted visitor got %q", body)
	}
	if xff := originSaw("/show/seats"); len(xff) != 1 || xff[0] != "127.0.1.2" {
		t.Fatalf("the origin saw X-Forwarded-For %q, want the visitor's 127.0.1.2", xff)
	}

	// Device binding: the pass works from the visitor's /24 and not from
	// another network, asked in turns over HAProxy's pooled connections.
	same := newLoopbackVisitor(t, "127.0.1.9", roots)
	other := newLoopbackVisitor(t, "127.0.2.2", roots)
	u, _ := url.Parse(base)
	for _, v := range []*loopbackVisitor{same, other} {
		v.jar.SetCookies(u, []*http.Cookie{{Name: pass.Name, Value: pass.Value}})
	}
	for i := range 3 {
		if _, body := same.get(t, base+"/show/seats"); body != "origin:/show/seats" {
			t.Fatalf("round %d: the pass from the visitor's own /24 got %q", i, body)
		}
		if _, body := other.get(t, base+"/show/seats"); strings.HasPrefix(body, "origin:") {
			t.Fatalf("round %d: the pass from another network reached the origin", i)
		}
	}
	if n := len(originSaw("/show/seats")); n != 4 {
		t.Fatalf("the origin served the gated path %d times, want 4 (the visitor once, its /24 three times)", n)
	}

	// Rate limits count the visitor's address: one address spends its
	// budget, the next address still has its own.
	greedy := newLoopbackVisitor(t, "127.0.3.2", roots)
	limited := 0
	for range 30 {
		if resp, _ := greedy.get(t, base+"/_wr/api/status?event=show"); resp.StatusCode == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("30 API requests at once from one address were never limited")
	}
	if resp, body := newLoopbackVisitor(t, "127.0.4.2", roots).get(t, base+"/_wr/api/status?event=show"); resp.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("another address was limited with the first (%s): the limit counted HAProxy", body)
	}

	m := metrics(t, &Demo{AdminURL: "http://" + w.AdminAddr().String(), AdminToken: "haproxy-test-admin-token"})
	if n := metricValue(t, m, `waitroom_proxy_protocol_connections_total{result="accepted"}`); n == 0 {
		t.Error("no connection was counted with a PROXY header")
	}
	for _, result := range []string{"malformed", "untrusted"} {
		if n := metricValue(t, m, `waitroom_proxy_protocol_connections_total{result="`+result+`"}`); n != 0 {
			t.Errorf("%v connections %s", n, result)
		}
	}
}

// loopbackVisitor is a client with its own cookies whose connections
// come from one loopback address.
type loopbackVisitor struct {
	c   *http.Client
	jar *cookiejar.Jar
}

func newLoopbackVisitor(t *testing.T, addr string, roots *x509.CertPool) *loopbackVisitor {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}
	tr := &http.Transport{
		DialContext:       d.DialContext,
		TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: "shop.example.com"},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &loopbackVisitor{c: &http.Client{Transport: tr, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, jar: jar}
}

func (v *loopbackVisitor) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) haproxy-test")
	req.Header.Set("Accept", "text/html,application/json")
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (v *loopbackVisitor) get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	return v.do(t, req)
}

func (v *loopbackVisitor) post(t *testing.T, u, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return v.do(t, req)
}

// selfSigned writes a certificate for shop.example.com and its key, in
// one PEM file as HAProxy's crt takes them, and returns the file and a
// pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shop.example.com"},
		DNSNames: []string{"shop.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})...)
	path := filepath.Join(dir, "shop.pem")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return path, pool
}
