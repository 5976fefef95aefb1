package acme

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	xacme "golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// Options configure a Manager.
type Options struct {
	// Domains are the names certificates are obtained for; no other.
	Domains []string
	// Email is the account's contact; "" for none.
	Email string
	// DirectoryURL is the CA's ACME directory.
	DirectoryURL string
	// Roots verify the directory's HTTPS; nil uses the system's.
	Roots *x509.CertPool
	// Cache keeps certificates, the account key and challenge answers.
	Cache autocert.Cache
	// RenewBefore is how long before expiry a certificate is renewed.
	RenewBefore time.Duration
	// HTTP01 offers the HTTP-01 challenge too (a plain listener answers
	// it through Challenge); TLS-ALPN-01 is always offered.
	HTTP01 bool
	Logger *slog.Logger
}

// Manager obtains, renews and serves the certificates of Options.Domains.
type Manager struct {
	m       *autocert.Manager
	domains map[string]bool
	names   []string
	http01  http.Handler
	cache   autocert.Cache
	log     *slog.Logger

	mu     sync.Mutex
	expiry map[string]time.Time // domain → NotAfter of the certificate served last
	errors map[string]float64   // domain → failed attempts to get a certificate
}

// New returns a Manager for o; it orders nothing until Run or a
// handshake asks.
func New(o Options) (*Manager, error) {
	if len(o.Domains) == 0 || o.Cache == nil || o.DirectoryURL == "" {
		return nil, errors.New("acme: domains, a cache and a directory URL are needed")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: o.Roots, MinVersion: tls.VersionTLS12}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Manager{domains: map[string]bool{}, cache: o.Cache, log: log,
		expiry: map[string]time.Time{}, errors: map[string]float64{}}
	for _, d := range o.Domains {
		w.domains[d] = true
		w.names = append(w.names, d)
	}
	w.m = &autocert.Manager{
		Prompt:      autocert.AcceptTOS,
		Cache:       o.Cache,
		HostPolicy:  autocert.HostWhitelist(o.Domains...),
		RenewBefore: o.RenewBefore,
		Email:       o.Email,
		Client: &xacme.Client{DirectoryURL: o.DirectoryURL,
			HTTPClient: &http.Client{Transport: tr, Timeout: time.Minute}},
	}
	if o.HTTP01 {
		// Calling HTTPHandler is what makes autocert offer HTTP-01.
		w.http01 = w.m.HTTPHandler(http.NotFoundHandler())
	}
	return w, nil
}

// TLSConfig sets c up to serve the managed certificates: GetCertificate,
// and the ALPN protocol of TLS-ALPN-01 after c's own.
func (w *Manager) TLSConfig(c *tls.Config) {
	c.Certificates = nil
	c.GetCertificate = w.GetCertificate
	c.NextProtos = append(c.NextProtos, xacme.ALPNProto)
}

// GetCertificate answers a handshake: the certificate of a configured
// name (ordering it when there is none yet), the TLS-ALPN-01 answer to
// the CA, and an error for any other name.
func (w *Manager) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := strings.TrimSuffix(strings.ToLower(hello.ServerName), ".")
	if !w.domains[name] {
		// Before autocert: an unknown name neither orders nor touches the
		// cache (autocert would look up a TLS-ALPN-01 answer for any).
		return nil, fmt.Errorf("acme: no certificate for server name %q", hello.ServerName)
	}
	cert, err := w.m.GetCertificate(hello)
	if err != nil {
		w.failed(name, err)
		return nil, err
	}
	if cert.Leaf != nil && !isToken(hello) {
		w.mu.Lock()
		w.expiry[name] = cert.Leaf.NotAfter
		w.mu.Unlock()
	}
	return cert, nil
}

func isToken(hello *tls.ClientHelloInfo) bool {
	return len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == xacme.ALPNProto
}

// failed counts a failed attempt and releases the order's lock at once,
// so that another replica can try without waiting for it to lapse.
func (w *Manager) failed(name string, err error) {
	w.mu.Lock()
	w.errors[name]++
	w.mu.Unlock()
	w.log.Warn("acme: no certificate", "domain", name, "err", err)
	if rc, ok := w.cache.(*RedisCache); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rc.Release(ctx, name)
		rc.Release(ctx, name+"+rsa")
	}
}

// Run gets every domain's certificate at start, rather than at the first
// visitor's handshake, and then looks again every interval, which keeps
// the expiry metric true after a renewal (autocert renews in the
// background). It returns when ctx ends.
func (w *Manager) Run(ctx context.Context, interval time.Duration) {
	for {
		for _, d := range w.names {
			if ctx.Err() != nil {
				return
			}
			// An ECDSA certificate, as a modern client asks for.
			w.GetCertificate(&tls.ClientHelloInfo{ServerName: d, SupportedProtos: []string{"http/1.1"},
				SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
				SupportedCurves:  []tls.CurveID{tls.CurveP256},
				CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// challengePrefix is where HTTP-01 answers live (RFC 8555 §8.3).
const challengePrefix = "/.well-known/acme-challenge/"

// Challenge answers an HTTP-01 request of the CA and reports whether it
// did: a GET or HEAD of /.well-known/acme-challenge/<token> with a Host
// of a configured domain. Anything else is left to the caller.
func (w *Manager) Challenge(ctx *fasthttp.RequestCtx) bool {
	if w.http01 == nil || !bytes.HasPrefix(ctx.URI().PathOriginal(), []byte(challengePrefix)) {
		return false
	}
	host, ok := w.challengeHost(ctx.Host())
	if !ok {
		return false
	}
	token, ok := challengeToken(ctx.URI().PathOriginal())
	if !ok || !(ctx.IsGet() || ctx.IsHead()) {
		writeJSON(ctx, fasthttp.StatusNotFound, notFound)
		return true
	}
	// Not ctx as the context: fasthttp reuses it once the handler returns.
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+host+challengePrefix+token, nil)
	if err != nil {
		writeJSON(ctx, fasthttp.StatusNotFound, notFound)
		return true
	}
	rec := &recorder{h: http.Header{}, status: http.StatusOK}
	w.http01.ServeHTTP(rec, req)
	if rec.status != http.StatusOK {
		writeJSON(ctx, fasthttp.StatusNotFound, notFound)
		return true
	}
	ctx.Response.Header.SetContentType("text/plain")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(rec.body.Bytes())
	return true
}

// challengeHost returns the configured domain a Host header names (its
// port and a trailing dot ignored), if any.
func (w *Manager) challengeHost(raw []byte) (string, bool) {
	h := string(raw)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return h, w.domains[h]
}

// challengeToken returns the token of an HTTP-01 path: base64url
// characters only (RFC 8555 §8.1), nothing after them.
func challengeToken(path []byte) (string, bool) {
	t := path[len(challengePrefix):]
	if len(t) == 0 || len(t) > 256 {
		return "", false
	}
	for _, c := range t {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return string(t), true
}

var notFound = []byte(`{"error":"not_found","message":"No such ACME challenge."}`)

func writeJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.Response.Header.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// recorder is the http.ResponseWriter autocert's HTTP-01 handler writes
// to; its error text never reaches the client.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

// Expiry returns the NotAfter of each domain's certificate served last.
func (w *Manager) Expiry() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]time.Time, len(w.expiry))
	for d, t := range w.expiry {
		out[d] = t
	}
	return out
}

// Describe and Collect make the Manager a prometheus.Collector of
// waitroom_tls_acme_errors_total (failed attempts to get a certificate,
// by domain); the certificates' expiry is read through Expiry.
func (w *Manager) Describe(ch chan<- *prometheus.Desc) { ch <- errorsDesc }

// Collect implements prometheus.Collector.
func (w *Manager) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.names {
		ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, w.errors[d], d)
	}
}

var errorsDesc = prometheus.NewDesc("waitroom_tls_acme_errors_total",
	"Failed attempts to get a certificate from the ACME CA (order, validation, cache), by domain.",
	[]string{"domain"}, nil)

// LoadRoots reads a PEM file of root certificates.
func LoadRoots(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in it")
	}
	return p, nil
}
