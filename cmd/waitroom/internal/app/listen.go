// The listeners of `waitroom serve`: opening the configured ones, their
// connection limits and PROXY protocol, and the HTTPS configuration.

package app

import (
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net"
	"net/netip"
	"os"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/proxy/netlimit"
)

// listen opens every configured listener the caller did not pass.
func (w *Waitroom) listen() error {
	s := w.cfg.Serve
	open := func(ln *net.Listener, key, addr string) error {
		if *ln != nil || addr == "" {
			return nil
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return startErr(key, addr, err)
		}
		*ln = l
		return nil
	}
	var errs []error
	errs = append(errs, open(&w.lns.HTTP, "serve.listen", s.Listen), open(&w.lns.Admin, "admin.listen", w.cfg.Admin.Listen))
	w.lns.HTTP = w.proxyProtocol(w.lns.HTTP)
	if s.WithInventory {
		errs = append(errs, open(&w.lns.Inventory, "inventory.listen", w.cfg.Inventory.Listen))
	}
	w.guardListeners()
	if s.TLS.Listen != "" {
		tc, err := w.tlsConfig(s.TLS)
		if ci, ok := certOf("serve.tls", tc); err == nil && ok {
			w.cert.Store(&ci)
		}
		if err != nil {
			errs = append(errs, err)
		} else if err := open(&w.lns.HTTPS, "serve.tls.listen", s.TLS.Listen); err != nil {
			errs = append(errs, err)
		} else {
			// PROXY headers are read first, so that the connection limits
			// see the client the balancer names; TLS comes last.
			w.lns.HTTPS = w.guard(w.proxyProtocol(w.lns.HTTPS), "https", w.proxyLimits())
			tc.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
				if w.fingerprints != nil {
					w.fingerprints.Observe(hello)
				}
				return nil, nil
			}
			w.lns.HTTPS = tls.NewListener(w.lns.HTTPS, tc)
		}
	}
	for _, ln := range []net.Listener{w.lns.HTTP, w.lns.HTTPS, w.lns.Admin, w.lns.Inventory} {
		if ln != nil {
			w.closers = append(w.closers, func() error { ln.Close(); return nil })
		}
	}
	return errors.Join(errs...)
}

// guardListeners wraps the plain listeners (HTTP, admin, inventory) so
// that accept errors back off instead of stopping the server, and their
// connections are bounded (see proxy/netlimit). The HTTP listener is
// wrapped above its PROXY protocol reader, so per-client limits count the
// client the balancer names.
func (w *Waitroom) guardListeners() {
	w.netm = netlimit.NewMetrics()
	w.lns.HTTP = w.guard(w.lns.HTTP, "http", w.proxyLimits())
	w.lns.Admin = w.guard(w.lns.Admin, "admin", netlimit.Limits{MaxConns: w.cfg.Admin.MaxConnections})
	w.lns.Inventory = w.guard(w.lns.Inventory, "inventory", netlimit.Limits{MaxConns: w.cfg.Serve.MaxConnections})
}

func (w *Waitroom) guard(ln net.Listener, name string, l netlimit.Limits) net.Listener {
	if ln == nil {
		return nil
	}
	return netlimit.Wrap(ln, name, l, w.netm, w.log)
}

// proxyLimits are the connection limits of the proxy's listeners; trusted
// proxies carry many clients and have no per-client limit.
func (w *Waitroom) proxyLimits() netlimit.Limits {
	s := w.cfg.Serve
	l := netlimit.Limits{MaxConns: s.MaxConnections, MaxConnsPerClient: s.MaxConnectionsPerClient}
	if trusted, err := config.ParseNetworks(s.TrustedProxies); err == nil && len(trusted) > 0 {
		l.Exempt = func(a netip.Addr) bool {
			for _, p := range trusted {
				if p.Contains(a) {
					return true
				}
			}
			return false
		}
	}
	return l
}

// tlsConfig is the HTTPS listener's configuration: the certificate
// files', or the ACME manager's certificates.
func (w *Waitroom) tlsConfig(c config.ServeTLS) (*tls.Config, error) {
	if !c.ACME.Enabled() {
		return fileTLSConfig(c)
	}
	m, err := w.newACME()
	if err != nil {
		return nil, err
	}
	w.acme = m
	tc := &tls.Config{MinVersion: minTLSVersion(c), NextProtos: []string{"http/1.1"}}
	m.TLSConfig(tc)
	return tc, nil
}

func minTLSVersion(c config.ServeTLS) uint16 {
	if c.MinVersion == config.TLS13 {
		return tls.VersionTLS13
	}
	return tls.VersionTLS12
}

func fileTLSConfig(c config.ServeTLS) (*tls.Config, error) {
	certPEM, err := os.ReadFile(c.CertFile)
	if err != nil {
		return nil, startErr("serve.tls.cert_file", c.CertFile, err)
	}
	keyPEM, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return nil, startErr("serve.tls.key_file", c.KeyFile, err)
	}
	if b, _ := pem.Decode(certPEM); b == nil || b.Type != "CERTIFICATE" {
		return nil, startErr("serve.tls.cert_file", c.CertFile, errors.New("no PEM CERTIFICATE block first"))
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The certificate parsed as PEM: what is left is the key, or the
		// pair not matching.
		return nil, startErr("serve.tls.key_file", c.KeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: minTLSVersion(c),
		NextProtos: []string{"http/1.1"}}, nil
}
