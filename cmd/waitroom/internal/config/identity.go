package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/proxy/identity"
)

// Identity says how the origin tells waitroom who is logged in, so that
// an event with identity optional or required gives one place per
// account: a second join of the same account, from any device and on any
// replica, gets the first place back, and the draw counts the account
// once. Name where the identity is (cookie or header) and how to check it
// (secret, or jwks_url with issuer and audience).
type Identity struct {
	// Cookie the origin sets for its logged-in user, holding the
	// identity. One of cookie and header.
	Cookie string `yaml:"cookie"`
	// Request header holding the identity (a "Bearer " prefix is
	// dropped), for a front that adds it. One of cookie and header.
	Header string `yaml:"header"`
	// Key (HMAC-SHA256, at least 32 bytes) the origin signs identities
	// with: account.expiry.mac, see docs/visitor-api.md#one-place-per-account; from
	// the environment (${WAITROOM_IDENTITY_SECRET}). One of secret and
	// jwks_url.
	Secret string `yaml:"secret"`
	// URL of the origin's (or its identity provider's) JSON Web Key Set,
	// against which a JWT identity is checked (RS256, ES256, EdDSA): https,
	// or http to a loopback address. One of secret and jwks_url.
	JWKSURL string `yaml:"jwks_url"`
	// The iss a JWT must carry (with jwks_url).
	Issuer string `yaml:"issuer"`
	// A value the JWT's aud must hold (with jwks_url).
	Audience string `yaml:"audience"`
	// The JWT claim holding the account id (with jwks_url).
	Claim string `yaml:"claim"`
	// How long one fetch of the key set may take (with jwks_url).
	FetchTimeout Duration `yaml:"fetch_timeout"`
	// The least time between two fetches of the key set, however many
	// tokens name a key it does not hold (with jwks_url).
	MinRefresh Duration `yaml:"min_refresh"`
	// Where the page sends a visitor refused for want of a valid identity
	// to log in: a path on this site or an https URL. Empty: the page
	// only says to log in.
	LoginURL string `yaml:"login_url"`
}

// IdentityMode is a value of events[].identity.
type IdentityMode string

// Values of events[].identity.
const (
	IdentityOff      IdentityMode = "off"
	IdentityOptional IdentityMode = "optional"
	IdentityRequired IdentityMode = "required"
)

// Defaults of identity and events[].identity.
const (
	DefaultIdentityMode  = IdentityOff
	DefaultIdentityClaim = identity.DefaultClaim
	// MinIdentitySecretBytes bounds identity.secret from below.
	MinIdentitySecretBytes = 32
)

// DefaultIdentity is the identity section before the file's keys apply.
func DefaultIdentity() Identity {
	return Identity{Claim: DefaultIdentityClaim, FetchTimeout: Duration(identity.DefaultTimeout),
		MinRefresh: Duration(identity.DefaultMinRefresh)}
}

// Configured reports whether the section says where an identity is.
func (id *Identity) Configured() bool { return id.Cookie != "" || id.Header != "" }

// IdentityUsed reports whether an event reads the identity.
func (c *Config) IdentityUsed() bool {
	for i := range c.Events {
		if m := c.Events[i].Identity; m == IdentityOptional || m == IdentityRequired {
			return true
		}
	}
	return false
}

// Verifier builds the identity verifier of the section (nil, nil when it
// names no cookie or header).
func (id *Identity) Verifier() (*identity.Verifier, error) {
	if !id.Configured() {
		return nil, nil
	}
	o := identity.Options{Cookie: id.Cookie, Header: id.Header}
	if id.Secret != "" {
		o.Secret = []byte(id.Secret)
	} else {
		o.JWKS = &identity.JWKS{URL: id.JWKSURL, Issuer: id.Issuer, Audience: id.Audience, Claim: id.Claim,
			Timeout: time.Duration(id.FetchTimeout), MinRefresh: time.Duration(id.MinRefresh)}
	}
	return identity.New(o)
}

// identity checks the identity section and the events' identity modes.
func (v *validator) identity(p string, id *Identity, c *Config) {
	for i := range c.Events {
		switch c.Events[i].Identity {
		case IdentityOff, IdentityOptional, IdentityRequired:
		default:
			v.fail(fmt.Sprintf("events[%d].identity", i), "must be off, optional or required (got %q)", c.Events[i].Identity)
		}
	}
	used := c.IdentityUsed()
	if !used && *id == DefaultIdentity() {
		return
	}
	if id.Cookie != "" && !isToken(id.Cookie) {
		v.fail(p+".cookie", "must be a cookie name: letters, digits and !#$%%&'*+-.^_`|~ (got %q)", id.Cookie)
	}
	if id.Header != "" {
		v.headerName(p+".header", id.Header)
	}
	switch {
	case id.Cookie != "" && id.Header != "":
		v.fail(p+".header", "is set with cookie: name one place the identity is")
	case id.Cookie == "" && id.Header == "":
		v.fail(p+".cookie", "must be set (or header) when an event's identity is optional or required: where the origin puts who is logged in")
	}
	if id.Secret != "" {
		v.secret(p+".secret", id.Secret, MinIdentitySecretBytes)
	}
	if id.JWKSURL != "" {
		v.jwksURL(p+".jwks_url", id.JWKSURL)
		if id.Issuer == "" {
			v.fail(p+".issuer", "must be set with jwks_url: the iss the origin's tokens carry")
		}
		if id.Audience == "" {
			v.fail(p+".audience", "must be set with jwks_url: the aud the origin's tokens carry for waitroom")
		}
		if id.Claim == "" {
			v.fail(p+".claim", "must name the claim holding the account id, such as sub")
		}
		v.positive(p+".fetch_timeout", id.FetchTimeout)
		v.positive(p+".min_refresh", id.MinRefresh)
	} else {
		for _, k := range []struct{ key, val string }{{"issuer", id.Issuer}, {"audience", id.Audience}} {
			if k.val != "" {
				v.fail(p+"."+k.key, "applies to a JWT (jwks_url), which is not set")
			}
		}
	}
	switch {
	case id.Secret != "" && id.JWKSURL != "":
		v.fail(p+".jwks_url", "is set with secret: check the identity one way, a shared secret or the origin's JWKS")
	case id.Secret == "" && id.JWKSURL == "":
		v.fail(p+".secret", "must be set (or jwks_url) when an event's identity is optional or required: the key the origin signs identities with, from the environment")
	}
	if id.LoginURL != "" {
		v.loginURL(p+".login_url", id.LoginURL)
	}
}

// jwksURL checks identity.jwks_url: https, or http to a loopback host.
func (v *validator) jwksURL(p, raw string) {
	const want = "must be the https URL of the origin's JWKS, such as https://id.example.com/.well-known/jwks.json"
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.fail(p, "%s (it does not parse as a URL)", want)
	case u.Host == "":
		v.fail(p, "%s (the host is missing)", want)
	case u.User != nil:
		v.fail(p, "must not carry credentials")
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		v.fail(p, "%s (got scheme %q; http only to a loopback address)", want, u.Scheme)
	}
}

// loginURL checks identity.login_url: a same-site path or an https URL.
func (v *validator) loginURL(p, raw string) {
	const want = "must be a path on this site, such as /login, or an https URL"
	if strings.HasPrefix(raw, "/") {
		if err := sitePath(strings.SplitN(raw, "?", 2)[0]); err != nil {
			v.fail(p, "%s (%v)", want, err)
		}
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		v.fail(p, "%s", want)
	}
}

// loopbackHost reports whether h is localhost or a loopback address.
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}
