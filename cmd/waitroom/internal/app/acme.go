// serve.tls.acme: the ACME manager behind the TLS listener, where its
// certificates are kept, and the HTTP-01 answers on the plain listener
// (the certificates' expiry is in observe.go's metrics).

package app

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/acme/autocert"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/acme"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// acmeRefresh is how often the manager looks at its certificates again
// (renewals themselves are autocert's, RenewBefore ahead of expiry).
const acmeRefresh = time.Hour

// newACME builds the manager of serve.tls.acme. Certificates are kept in
// Redis under admission.redis_prefix with the Redis admission store, so
// that replicas share them, else in admission.data_dir/acme.
func (w *Waitroom) newACME() (*acme.Manager, error) {
	a := w.cfg.Serve.TLS.ACME
	var roots *x509.CertPool
	if a.CAFile != "" {
		var err error
		if roots, err = acme.LoadRoots(a.CAFile); err != nil {
			return nil, startErr("serve.tls.acme.ca_file", a.CAFile, err)
		}
	}
	var cache autocert.Cache
	if w.cfg.Admission.Store == config.StoreRedis {
		c, err := w.admissionRedis.Client()
		if err != nil {
			return nil, startErr("admission.redis", "", err)
		}
		cache = acme.NewRedisCache(c, w.cfg.Admission.RedisPrefix)
	} else {
		dir := filepath.Join(w.cfg.Admission.DataDir, "acme")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, startErr("admission.data_dir", dir, err)
		}
		cache = autocert.DirCache(dir)
	}
	return acme.New(acme.Options{Domains: a.Domains, Email: a.Email, DirectoryURL: a.DirectoryURL,
		Roots: roots, Cache: cache, RenewBefore: a.RenewBefore.Std(),
		HTTP01: w.lns.HTTP != nil, Logger: w.log})
}

// acmeChallenges puts the HTTP-01 answers in front of h on the plain
// listener: the CA's request for a configured domain is answered before
// anything else routes it.
func (w *Waitroom) acmeChallenges(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if w.acme == nil {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsTLS() && w.acme.Challenge(ctx) {
			return
		}
		h(ctx)
	}
}

// runACME gets the certificates at start and keeps looking.
func (w *Waitroom) runACME(ctx context.Context) {
	if w.acme != nil {
		w.acme.Run(ctx, acmeRefresh)
	}
}
