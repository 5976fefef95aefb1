package pebbletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// Options configure a CA.
type Options struct {
	// Dir holds the configuration, pebble's certificate and the logs; a
	// test directory when "" (Start), required for Launch.
	Dir string
	// HTTPPort and TLSPort are the loopback ports pebble's validation
	// authority connects to for HTTP-01 and TLS-ALPN-01 (the server under
	// test's plain and TLS listeners). A port with nothing on it makes
	// that challenge fail.
	HTTPPort, TLSPort int
	// AlwaysValid skips validation (PEBBLE_VA_ALWAYS_VALID=1).
	AlwaysValid bool
	// CertificateValidity is how long the certificates pebble issues are
	// valid (whole seconds); 0 keeps pebble's default (5 years).
	CertificateValidity time.Duration
}

// Server is a running pebble and its DNS server.
type Server struct {
	// DirectoryURL is the ACME directory, https on 127.0.0.1.
	DirectoryURL string
	// CAFile is the PEM file of the certificate pebble's HTTPS serves
	// (its own root): a client of DirectoryURL trusts it.
	CAFile string
	// Management is the https base URL of the management API.
	Management string
	Dir        string
	roots      *x509.CertPool
	pebble     *proctest.Proc
	dns        *proctest.Proc
}

// Binary returns the path of pebble, or an error telling how to get it.
func Binary() (string, error) { return proctest.Binary("pebble") }

// Start runs pebble with opts and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	return proctest.InTest(tb, &opts.Dir, func() (*Server, error) { return Launch(opts) })
}

// Launch runs pebble and its DNS server; the caller stops them.
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dnsBin, err := proctest.Binary("pebble-challtestsrv")
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("pebbletest: Launch needs a directory")
	}
	s := &Server{Dir: opts.Dir, CAFile: filepath.Join(opts.Dir, "pebble-https.pem")}
	keyFile := filepath.Join(opts.Dir, "pebble-https.key")
	if s.roots, err = selfSigned(s.CAFile, keyFile); err != nil {
		return nil, err
	}
	dnsAddr := ""
	err = proctest.OnFreePorts("pebble-challtestsrv", 5, func(port int) error {
		mgmt, err := freeport.Get()
		if err != nil {
			return proctest.Permanent(err)
		}
		dnsAddr = hostPort(port)
		log, err := os.Create(filepath.Join(s.Dir, "dns.log"))
		if err != nil {
			return proctest.Permanent(err)
		}
		defer log.Close()
		cmd := exec.Command(dnsBin, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
			"-dns01", dnsAddr, "-http01", "", "-https01", "", "-tlsalpn01", "",
			"-management", hostPort(mgmt))
		cmd.Stdout, cmd.Stderr = log, log
		s.dns, err = proctest.Start(cmd, proctest.Wait{Name: "pebble-challtestsrv", Addr: hostPort(mgmt),
			Timeout: 10 * time.Second, Log: func() string { return proctest.LogTail(filepath.Join(s.Dir, "dns.log"), 8) }})
		return err
	})
	if err != nil {
		return nil, err
	}
	err = proctest.OnFreePorts("pebble", 5, func(port int) error {
		mgmt, err := freeport.Get()
		if err != nil {
			return proctest.Permanent(err)
		}
		s.DirectoryURL = "https://" + hostPort(port) + "/dir"
		s.Management = "https://" + hostPort(mgmt)
		cfg := map[string]any{"pebble": map[string]any{
			"listenAddress": hostPort(port), "managementListenAddress": hostPort(mgmt),
			"certificate": s.CAFile, "privateKey": keyFile,
			"httpPort": opts.HTTPPort, "tlsPort": opts.TLSPort,
			"ocspResponderURL": "", "externalAccountBindingRequired": false,
		}}
		if v := opts.CertificateValidity; v > 0 {
			cfg["pebble"].(map[string]any)["certificateValidityPeriod"] = uint64(v / time.Second)
		}
		b, _ := json.Marshal(cfg)
		file := filepath.Join(s.Dir, "pebble-config.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return proctest.Permanent(err)
		}
		log, err := os.Create(s.logFile())
		if err != nil {
			return proctest.Permanent(err)
		}
		defer log.Close()
		cmd := exec.Command(bin, "-config", file, "-dnsserver", dnsAddr)
		cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
		if opts.AlwaysValid {
			cmd.Env = append(cmd.Env, "PEBBLE_VA_ALWAYS_VALID=1")
		}
		cmd.Stdout, cmd.Stderr = log, log
		s.pebble, err = proctest.Start(cmd, proctest.Wait{Name: "pebble", Addr: hostPort(mgmt),
			Timeout: 15 * time.Second, Log: s.LogTail})
		return err
	})
	if err != nil {
		s.dns.Kill()
		return nil, err
	}
	return s, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func (s *Server) logFile() string { return filepath.Join(s.Dir, "pebble.log") }

// LogTail returns the last lines of pebble's log.
func (s *Server) LogTail() string { return proctest.LogTail(s.logFile(), 12) }

// Requests counts the requests pebble logged for an ACME endpoint, such
// as "/order-plz" (new orders) or "/finalize-order/".
func (s *Server) Requests(endpoint string) (int, error) {
	b, err := os.ReadFile(s.logFile())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "POST "+endpoint) {
			n++
		}
	}
	return n, nil
}

// Roots returns the pool that verifies pebble's own HTTPS (the
// directory and the management API).
func (s *Server) Roots() *x509.CertPool { return s.roots }

// IssuerPool returns the root and intermediate pebble issues from, read
// from its management API: a chain it issued verifies against them.
func (s *Server) IssuerPool() (roots, intermediates *x509.CertPool, err error) {
	roots, intermediates = x509.NewCertPool(), x509.NewCertPool()
	for _, p := range []struct {
		path string
		pool *x509.CertPool
	}{{"/roots/0", roots}, {"/intermediates/0", intermediates}} {
		b, err := s.get(p.path)
		if err != nil {
			return nil, nil, err
		}
		if !p.pool.AppendCertsFromPEM(b) {
			return nil, nil, fmt.Errorf("pebble %s: no PEM certificate", p.path)
		}
	}
	return roots, intermediates, nil
}

func (s *Server) get(path string) ([]byte, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get(s.Management + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("pebble %s: HTTP %d", path, resp.StatusCode)
	}
	return b, nil
}

// Stop ends pebble and its DNS server.
func (s *Server) Stop() {
	if s.pebble != nil {
		s.pebble.Stop(syscall.SIGTERM, 5*time.Second)
		s.pebble = nil
	}
	if s.dns != nil {
		s.dns.Stop(syscall.SIGTERM, 5*time.Second)
		s.dns = nil
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and
// localhost and its key, and returns a pool of it.
func selfSigned(certFile, keyFile string) (*x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pebbletest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	p.AddCert(cert)
	return p, nil
}
