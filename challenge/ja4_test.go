package challenge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// The worked example of FoxIO's JA4 specification
// (github.com/FoxIO-LLC/ja4, technical_details/JA4.md), with GREASE
// values added the way Chromium sends them; they must not count.
func ja4SpecHello() *tls.ClientHelloInfo {
	return &tls.ClientHelloInfo{
		CipherSuites: []uint16{0x2a2a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035},
		ServerName:   "example.com",
		Extensions: []uint16{0x5a5a, 0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005,
			0x0023, 0x0012, 0x002b, 0xff01, 0x000b, 0x000a, 0x0015, 0xfafa},
		SignatureSchemes:  []tls.SignatureScheme{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601},
		SupportedProtos:   []string{"h2", "http/1.1"},
		SupportedVersions: []uint16{0x8a8a, 0x0304, 0x0303},
	}
}

func TestJA4SpecExample(t *testing.T) {
	const want = "t13d1516h2_8daaf6152771_e5627efa2ab1"
	if got := JA4(ja4SpecHello()); got != want {
		t.Errorf("JA4(spec example) = %s, want %s", got, want)
	}
}

func TestJA4(t *testing.T) {
	tests := []struct {
		name   string
		modify func(h *tls.ClientHelloInfo)
		want   string
	}{
		// The spec: "If there are no signature algorithms in the hello
		// packet, then the string ends without an underscore": 6d807ffa2a79.
		{"no signature algorithms", func(h *tls.ClientHelloInfo) { h.SignatureSchemes = nil }, "t13d1516h2_8daaf6152771_6d807ffa2a79"},
		{"GREASE signature algorithm only", func(h *tls.ClientHelloInfo) { h.SignatureSchemes = []tls.SignatureScheme{0x0a0a} }, "t13d1516h2_8daaf6152771_6d807ffa2a79"},
		{"no SNI", func(h *tls.ClientHelloInfo) {
			h.ServerName = ""
			h.Extensions = ja4DropExt(h.Extensions, 0x0000)
		}, "t13i1515h2_8daaf6152771_e5627efa2ab1"},
		{"SNI extension without a host name", func(h *tls.ClientHelloInfo) { h.ServerName = "" }, "t13d1516h2_8daaf6152771_e5627efa2ab1"},
		{"hand-built without Extensions: SNI from ServerName", func(h *tls.ClientHelloInfo) { h.Extensions = nil }, "t13d1500h2_8daaf6152771_000000000000"},
		{"no ALPN", func(h *tls.ClientHelloInfo) {
			h.SupportedProtos = nil
			h.Extensions = ja4DropExt(h.Extensions, 0x0010)
		}, "t13d151500_8daaf6152771_e5627efa2ab1"},
		{"http/1.1 first", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"http/1.1", "h2"} }, "t13d1516h1_8daaf6152771_e5627efa2ab1"},
		{"one-character ALPN", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"x"} }, "t13d1516xx_8daaf6152771_e5627efa2ab1"},
		// The spec's non-alphanumeric ALPN examples.
		{"ALPN 0xAB", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\xab"} }, "t13d1516ab_8daaf6152771_e5627efa2ab1"},
		{"ALPN 0xAB 0xCD", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\xab\xcd"} }, "t13d1516ad_8daaf6152771_e5627efa2ab1"},
		{"ALPN 0x30 0xAB", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\x30\xab"} }, "t13d15163b_8daaf6152771_e5627efa2ab1"},
		{"ALPN 0x30 0x31 0xAB 0xCD", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\x30\x31\xab\xcd"} }, "t13d15163d_8daaf6152771_e5627efa2ab1"},
		{"ALPN 0x30 0xAB 0xCD 0x31", func(h *tls.ClientHelloInfo) { h.SupportedProtos = []string{"\x30\xab\xcd\x31"} }, "t13d151601_8daaf6152771_e5627efa2ab1"},
		{"TLS 1.2", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x0303, 0x0302} }, "t12d1516h2_8daaf6152771_e5627efa2ab1"},
		{"TLS 1.1", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x0302} }, "t11d1516h2_8daaf6152771_e5627efa2ab1"},
		{"TLS 1.0", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x0301} }, "t10d1516h2_8daaf6152771_e5627efa2ab1"},
		{"SSL 3.0", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x0300} }, "ts3d1516h2_8daaf6152771_e5627efa2ab1"},
		{"unknown version", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x7f1c} }, "t00d1516h2_8daaf6152771_e5627efa2ab1"},
		{"only GREASE versions", func(h *tls.ClientHelloInfo) { h.SupportedVersions = []uint16{0x0a0a} }, "t00d1516h2_8daaf6152771_e5627efa2ab1"},
		{"no ciphers", func(h *tls.ClientHelloInfo) { h.CipherSuites = []uint16{0x0a0a} }, "t13d0016h2_000000000000_e5627efa2ab1"},
		{"only SNI and ALPN", func(h *tls.ClientHelloInfo) {
			h.Extensions = []uint16{0x0000, 0x0010}
			h.SignatureSchemes = nil
		}, "t13d1502h2_8daaf6152771_000000000000"},
		{"order does not matter", func(h *tls.ClientHelloInfo) {
			ja4Reverse(h.CipherSuites)
			ja4Reverse(h.Extensions)
		}, "t13d1516h2_8daaf6152771_e5627efa2ab1"},
		{"over 99 ciphers", func(h *tls.ClientHelloInfo) {
			h.CipherSuites = nil
			for i := range 120 {
				h.CipherSuites = append(h.CipherSuites, uint16(0x1000+i))
			}
		}, "t13d9916h2_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ja4SpecHello()
			tt.modify(h)
			got := JA4(h)
			if strings.HasSuffix(tt.want, "_") {
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("JA4 = %s, want prefix %s", got, tt.want)
				}
			} else if got != tt.want {
				t.Errorf("JA4 = %s, want %s", got, tt.want)
			}
			if !ValidJA4(got) {
				t.Errorf("ValidJA4(%s) = false", got)
			}
		})
	}
}

func ja4DropExt(exts []uint16, id uint16) []uint16 {
	var out []uint16
	for _, e := range exts {
		if e != id {
			out = append(out, e)
		}
	}
	return out
}

func ja4Reverse(s []uint16) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

func TestJA4IsGREASE(t *testing.T) {
	n := 0
	for v := range 1 << 16 {
		if isGREASE(uint16(v)) {
			n++
			if v&0x0f0f != 0x0a0a || v>>8 != v&0xff {
				t.Errorf("isGREASE(%#04x)", v)
			}
		}
	}
	if n != 16 {
		t.Errorf("%d GREASE values, want 16", n)
	}
}

// The fingerprint of a real handshake, as GetConfigForClient sees it:
// crypto/tls's own client offers TLS 1.3, the server name and the ALPN
// values it was given.
func TestJA4RealHandshake(t *testing.T) {
	cert := ja4TestCert(t, "localhost")
	got := make(chan string, 1)
	srvConf := &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			got <- JA4(h)
			return nil, nil
		},
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvConf)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.(*tls.Conn).HandshakeContext(context.Background())
	}()
	d := tls.Dialer{Config: &tls.Config{ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}, InsecureSkipVerify: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	fp := <-got
	if !ValidJA4(fp) {
		t.Fatalf("JA4 = %q: not a fingerprint", fp)
	}
	if !strings.HasPrefix(fp, "t13d") || fp[8:10] != "h2" {
		t.Errorf("JA4 = %s, want t13d…h2 (TLS 1.3, SNI, h2 first)", fp)
	}
	t.Logf("crypto/tls client: %s", fp)
}

// ja4TestCert makes a self-signed certificate for host.
func ja4TestCert(t testing.TB, host string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestValidJA4(t *testing.T) {
	good := []string{
		"t13d1516h2_8daaf6152771_e5627efa2ab1",
		"t12i090900_000000000000_000000000000",
		"q13d0310h3_55b375c5d22e_cd85d2d88918",
		"ts3d1516AB_8daaf6152771_e5627efa2ab1",
	}
	bad := []string{
		"",
		"t13d1516h2_8daaf6152771",
		"t13d1516h2_8daaf6152771_e5627efa2ab1 ",
		"x13d1516h2_8daaf6152771_e5627efa2ab1",
		"t14d1516h2_8daaf6152771_e5627efa2ab1",
		"t13x1516h2_8daaf6152771_e5627efa2ab1",
		"t13d15a6h2_8daaf6152771_e5627efa2ab1",
		"t13d1516h-_8daaf6152771_e5627efa2ab1",
		"t13d1516h2_8DAAF6152771_e5627efa2ab1",
		"t13d1516h2-8daaf6152771_e5627efa2ab1",
		"t13d1516h2_8daaf6152771_e5627efa2abg",
	}
	for _, s := range good {
		if !ValidJA4(s) {
			t.Errorf("ValidJA4(%q) = false", s)
		}
	}
	for _, s := range bad {
		if ValidJA4(s) {
			t.Errorf("ValidJA4(%q) = true", s)
		}
	}
}

// FuzzJA4 feeds arbitrary hellos (a client controls every field) and
// checks that the result is always a well-formed fingerprint.
func FuzzJA4(f *testing.F) {
	f.Add([]byte{0x13, 0x01, 0x13, 0x02}, []byte{0x00, 0x00, 0x00, 0x10}, []byte{0x04, 0x03}, []byte{0x03, 0x04}, "h2", "example.com")
	f.Add([]byte{}, []byte{}, []byte{}, []byte{}, "", "")
	f.Add([]byte{0x0a, 0x0a}, []byte{0xfa, 0xfa, 0xff}, []byte{0x1}, []byte{0x7f, 0x1c}, "\xff\x00", "")
	f.Fuzz(func(t *testing.T, ciphers, exts, sigs, versions []byte, alpn, sni string) {
		u16 := func(b []byte) []uint16 {
			var out []uint16
			for i := 0; i+1 < len(b); i += 2 {
				out = append(out, uint16(b[i])<<8|uint16(b[i+1]))
			}
			return out
		}
		h := &tls.ClientHelloInfo{
			CipherSuites:      u16(ciphers),
			Extensions:        u16(exts),
			SupportedVersions: u16(versions),
			ServerName:        sni,
		}
		for _, s := range u16(sigs) {
			h.SignatureSchemes = append(h.SignatureSchemes, tls.SignatureScheme(s))
		}
		if alpn != "" {
			h.SupportedProtos = []string{alpn}
		}
		if fp := JA4(h); !ValidJA4(fp) {
			t.Fatalf("JA4 = %q: not a valid fingerprint", fp)
		}
	})
}
