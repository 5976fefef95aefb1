package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/pebbletest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// acmeDomain is the name the tests obtain certificates for; pebble's DNS
// answers 127.0.0.1 for it.
const acmeDomain = "shop.waitroom.test"

// acmeServe is a replica with serve.tls.acme against pebble: %[1]s the
// directory, %[2]s pebble's HTTPS root, %[3]s the admission section,
// %[6]s renew_before.
const acmeServe = `
log: {level: error}
serve:
  listen: 127.0.0.1:0
  tls:
    listen: 127.0.0.1:0
    acme:
      domains: [` + acmeDomain + `]
      email: ops@waitroom.test
      directory_url: %[1]s
      ca_file: %[2]s
      renew_before: %[6]s
  keys:
    signing: {secret: %[4]s}
admin:
  listen: 127.0.0.1:0
  token: acme-test-admin-token
admission:
%[3]s
origins:
  - name: shop
    addresses: [127.0.0.1:9]
    health_check: {disabled: true}
routes:
  - prefix: /show/
    event: show
events:
  - id: show
    on_sale_at: %[5]s
`

// acmeReplica is one waitroom serve on listeners the test opened (so
// that pebble can be pointed at their ports before it starts).
type acmeReplica struct {
	w         *Waitroom
	http, tls net.Listener
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func portOf(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// startACMEReplica runs a replica with admission (YAML lines) on the
// listeners given (opened here when nil).
func startACMEReplica(t *testing.T, p *pebbletest.Server, admission string, httpLn, tlsLn net.Listener) *acmeReplica {
	t.Helper()
	return startACMEReplicaRenewing(t, p, admission, "720h", httpLn, tlsLn)
}

// startACMEReplicaRenewing is startACMEReplica with serve.tls.acme's
// renew_before.
func startACMEReplicaRenewing(t *testing.T, p *pebbletest.Server, admission, renewBefore string, httpLn, tlsLn net.Listener) *acmeReplica {
	t.Helper()
	if httpLn == nil {
		httpLn = listenLoopback(t)
	}
	if tlsLn == nil {
		tlsLn = listenLoopback(t)
	}
	text := fmt.Sprintf(acmeServe, p.DirectoryURL, p.CAFile, admission, netguardSecret(), onSale(), renewBefore)
	w, _, stop := runServeOn(t, text, Listeners{HTTP: httpLn, HTTPS: tlsLn})
	t.Cleanup(stop)
	return &acmeReplica{w: w, http: httpLn, tls: tlsLn}
}

// handshake connects to the replica's TLS listener with sni, trusting
// roots, and returns the chain it was served.
func (r *acmeReplica) handshake(sni string, roots *x509.CertPool) ([]*x509.Certificate, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", r.tls.Addr().String(),
		&tls.Config{ServerName: sni, RootCAs: roots, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates, nil
}

// awaitCertificate waits until the replica serves acmeDomain a chain
// that pebble's root and intermediate verify, and returns its leaf.
func (r *acmeReplica) awaitCertificate(t *testing.T, p *pebbletest.Server) *x509.Certificate {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		roots, inters, err := p.IssuerPool()
		if err != nil {
			t.Fatal(err)
		}
		chain, err := r.handshake(acmeDomain, roots)
		if err == nil {
			for _, c := range chain[1:] {
				inters.AddCert(c)
			}
			if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: acmeDomain, Roots: roots, Intermediates: inters}); err != nil {
				t.Fatalf("the served chain does not verify against pebble's root: %v", err)
			}
			return chain[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate for %s: %v\npebble: %s", acmeDomain, err, p.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// get asks the replica's TLS listener for path as acmeDomain.
func (r *acmeReplica) get(t *testing.T, roots *x509.CertPool, path string) (*http.Response, string) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", r.tls.Addr().String())
		}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + acmeDomain + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// orders counts the new orders pebble received.
func orders(t *testing.T, p *pebbletest.Server) int {
	t.Helper()
	n, err := p.Requests("/order-plz")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// gaugeOf reads one sample of a gauge from the replica's registry.
func gaugeOf(t *testing.T, w *Waitroom, name, label, value string) (float64, bool) {
	t.Helper()
	fams, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// closedPort is a loopback port nothing listens on: pebble's validation
// of the challenge pointed there fails.
func closedPort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestACMETLSALPN01: waitroom serve with serve.tls.acme obtains a
// certificate from pebble whose validation authority really checks
// TLS-ALPN-01 against waitroom's TLS listener (HTTP-01 is pointed at a
// closed port, so no other way passes), serves it with a chain that
// pebble's root and intermediate (from its management API) verify,
// keeps it in admission.data_dir/acme, exports its expiry, and gives no
// certificate, and orders none, for a name it was not configured for.
func TestACMETLSALPN01(t *testing.T) {
	tlsLn := listenLoopback(t)
	p := pebbletest.Start(t, pebbletest.Options{HTTPPort: closedPort(t), TLSPort: portOf(tlsLn)})
	dataDir := t.TempDir()
	r := startACMEReplica(t, p, "  data_dir: "+dataDir, nil, tlsLn)
	leaf := r.awaitCertificate(t, p)
	if n := orders(t, p); n != 1 {
		t.Errorf("pebble received %d orders, want 1", n)
	}
	roots, _, _ := p.IssuerPool()
	resp, body := r.get(t, roots, "/_wr/jwks.json")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"keys"`) {
		t.Errorf("GET /_wr/jwks.json over the ACME certificate: %d %.200s", resp.StatusCode, body)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "acme", acmeDomain)); err != nil {
		t.Errorf("the certificate is not kept in the data dir: %v", err)
	}
	if v, ok := gaugeOf(t, r.w, "waitroom_tls_certificate_expiry_timestamp_seconds", "subject", acmeDomain); !ok || int64(v) != leaf.NotAfter.Unix() {
		t.Errorf("expiry metric = %v (present %v), want %d", v, ok, leaf.NotAfter.Unix())
	}

	for _, sni := range []string{"evil.waitroom.test", "other.test", ""} {
		if chain, err := r.handshake(sni, nil); err == nil {
			t.Errorf("SNI %q got a certificate for %v", sni, chain[0].DNSNames)
		}
	}
	if n := orders(t, p); n != 1 {
		t.Errorf("after handshakes for unlisted names pebble received %d orders, want 1", n)
	}
}

// TestACMEHTTP01: pebble's validation authority checks HTTP-01 against
// waitroom's plain listener (TLS-ALPN-01 is pointed at a closed port);
// the certificate is obtained that way. The challenge path answers only
// for the configured domain and only a well-formed token: another Host
// goes to the proxy as any request does, an unknown token gets a JSON
// 404.
func TestACMEHTTP01(t *testing.T) {
	httpLn := listenLoopback(t)
	p := pebbletest.Start(t, pebbletest.Options{HTTPPort: portOf(httpLn), TLSPort: closedPort(t)})
	r := startACMEReplica(t, p, "  data_dir: "+t.TempDir(), httpLn, nil)
	r.awaitCertificate(t, p)

	get := func(host, path string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", "http://"+httpLn.Addr().String()+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/.well-known/acme-challenge/unknownToken", "/.well-known/acme-challenge/a.b", "/.well-known/acme-challenge/"} {
		resp, body := get(acmeDomain, path)
		if resp.StatusCode != http.StatusNotFound || body != `{"error":"not_found","message":"No such ACME challenge."}` {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	if _, body := get("evil.waitroom.test", "/.well-known/acme-challenge/unknownToken"); strings.Contains(body, "ACME") {
		t.Errorf("an unlisted host's challenge path was answered by ACME: %q", body)
	}
}

// TestACMEReplicasShareOneOrder: three replicas on one Redis. The first
// two start together: one orders (pebble sees one order), the other
// waits on the lock and serves the same certificate. The third starts
// later and takes it from Redis without ordering. Pebble validates
// TLS-ALPN-01 against the first replica's listener; the answer is in
// Redis, so whichever replica ordered, the first can give it.
func TestACMEReplicasShareOneOrder(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	tlsLn := listenLoopback(t)
	p := pebbletest.Start(t, pebbletest.Options{HTTPPort: closedPort(t), TLSPort: portOf(tlsLn)})
	admission := "  store: redis\n  redis: {url: " + srv.URL() + "}\n  redis_prefix: \"acmetest:\""
	a := startACMEReplica(t, p, admission, nil, tlsLn)
	b := startACMEReplica(t, p, admission, nil, nil)
	la, lb := a.awaitCertificate(t, p), b.awaitCertificate(t, p)
	if la.SerialNumber.Cmp(lb.SerialNumber) != 0 {
		t.Errorf("the replicas serve two certificates (%x, %x)", la.SerialNumber, lb.SerialNumber)
	}
	if n := orders(t, p); n != 1 {
		t.Errorf("two replicas starting together: pebble received %d orders, want 1", n)
	}
	c := startACMEReplica(t, p, admission, nil, nil)
	if lc := c.awaitCertificate(t, p); lc.SerialNumber.Cmp(la.SerialNumber) != 0 {
		t.Errorf("the third replica serves another certificate (%x, want %x)", lc.SerialNumber, la.SerialNumber)
	}
	if n := orders(t, p); n != 1 {
		t.Errorf("after a third replica: pebble received %d orders, want 1", n)
	}
	keys, err := srv.Client().Keys(context.Background(), "acmetest:{acme}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(keys, " "), "acmetest:{acme}:"+acmeDomain) {
		t.Errorf("the certificate is not under the admission prefix in Redis: %v", keys)
	}
}

// TestACMERenews: a certificate whose remaining validity is within
// renew_before is renewed: pebble issues certificates valid for 90
// minutes, renew_before is 2h, so the first one is already due; the
// replica orders again and serves a new certificate, which verifies like
// the first, and the expiry metric follows it.
func TestACMERenews(t *testing.T) {
	tlsLn := listenLoopback(t)
	p := pebbletest.Start(t, pebbletest.Options{HTTPPort: closedPort(t), TLSPort: portOf(tlsLn), CertificateValidity: 90 * time.Minute})
	r := startACMEReplicaRenewing(t, p, "  data_dir: "+t.TempDir(), "2h", nil, tlsLn)
	first := r.awaitCertificate(t, p)
	if left := time.Until(first.NotAfter); left > 2*time.Hour {
		t.Fatalf("pebble issued a certificate valid for %s more, want at most 90m", left)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		next := r.awaitCertificate(t, p)
		if next.SerialNumber.Cmp(first.SerialNumber) != 0 {
			if v, ok := gaugeOf(t, r.w, "waitroom_tls_certificate_expiry_timestamp_seconds", "subject", acmeDomain); !ok || int64(v) != next.NotAfter.Unix() {
				t.Errorf("expiry metric = %v (present %v) after the renewal, want %d", v, ok, next.NotAfter.Unix())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving the first certificate (%x) though it is within renew_before; pebble orders: %d", first.SerialNumber, orders(t, p))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := orders(t, p); n < 2 {
		t.Errorf("renewed with %d orders, want a second one", n)
	}
}
