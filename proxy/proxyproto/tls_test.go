package proxyproto

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"testing"
	"time"
)

// TestListenerUnderTLS: on an HTTPS listener the PROXY header comes
// before the TLS handshake, so the reader sits beneath tls.NewListener,
// and the TLS connection's RemoteAddr is the client the header named.
func TestListenerUnderTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"site.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	l := serve(t, true, time.Minute)
	tl := tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	type result struct {
		addr string
		got  string
	}
	done := make(chan result, 1)
	go func() {
		c, err := tl.Accept()
		if err != nil {
			done <- result{}
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		io.ReadFull(c, buf)
		c.Write([]byte("ok"))
		done <- result{c.RemoteAddr().String(), string(buf)}
	}()
	raw := dial(t, l, v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 56324, 443)))
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	c := tls.Client(raw, &tls.Config{ServerName: "site.example", RootCAs: pool})
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.addr != "192.0.2.1:56324" || r.got != "hello" {
		t.Fatalf("TLS connection from %q read %q", r.addr, r.got)
	}
}
