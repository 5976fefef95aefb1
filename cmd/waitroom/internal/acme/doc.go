// Package acme gives `waitroom serve` certificates from an ACME CA (Let's
// Encrypt, or any RFC 8555 server) for serve.tls.acme, through
// golang.org/x/crypto/acme/autocert: TLS-ALPN-01 answered on the TLS
// listener, HTTP-01 answered on the plain listener before anything else
// routes, certificates only for the configured names (a handshake for any
// other name orders nothing), renewal before expiry, and the expiry of
// every certificate served as a metric.
//
// Certificates, the account key and the challenge answers are kept in an
// autocert.Cache: a directory (autocert.DirCache) for one process, or
// Redis (RedisCache) for replicas that share it. RedisCache adds what
// autocert leaves to the cache: a lock, so that of N replicas missing a
// certificate one orders it and the others wait for it and take it.
package acme
