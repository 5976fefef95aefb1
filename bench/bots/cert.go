package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certs is the self-signed certificate for 127.0.0.1 the waiting room
// serves, and how each client is told to trust it.
type certs struct {
	certFile, keyFile string
	pool              *x509.CertPool
	pair              tls.Certificate
	spki              string // base64 SHA-256 of the public key, for Chromium
}

func makeCert(dir string) (*certs, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "waitroom bench-bots"},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	c := &certs{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	cpem := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kpem := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if err := os.WriteFile(c.certFile, cpem, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.keyFile, kpem, 0o600); err != nil {
		return nil, err
	}
	if c.pair, err = tls.X509KeyPair(cpem, kpem); err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	c.pool = x509.NewCertPool()
	c.pool.AddCert(cert)
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	c.spki = base64.StdEncoding.EncodeToString(sum[:])
	return c, nil
}

// loadPool reads a certificate file into a pool (the agent's side).
func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(b)
	return p, nil
}
