package identity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/admission"
)

// Mode is what an event makes of the identity.
type Mode string

// Modes.
const (
	// Off: the identity is not read; every join is a new place.
	Off Mode = "off"
	// Optional: a valid identity gives one place per account; a join
	// without one, or with one that does not verify, is anonymous.
	Optional Mode = "optional"
	// Required: a join needs a valid identity.
	Required Mode = "required"
)

// Defaults of the JWKS key set.
const (
	// DefaultTimeout bounds one fetch of the key set.
	DefaultTimeout = 5 * time.Second
	// DefaultCacheFor is how long a fetched key set is used before it is
	// fetched again (on the next token; a failed fetch keeps the old set).
	DefaultCacheFor = time.Hour
	// DefaultMinRefresh is the least time between two fetches, however
	// many tokens name a key the set does not hold.
	DefaultMinRefresh = 30 * time.Second
	// DefaultClaim is the claim that holds the account id.
	DefaultClaim = "sub"
	// MaxValueLen bounds an identity's value (bytes): longer ones are
	// refused without being parsed.
	MaxValueLen = 8192
	// leeway is the clock skew allowed on a JWT's times.
	leeway = 30 * time.Second
)

// Errors of Verify. Each wraps ErrInvalid or is ErrUnavailable.
var (
	// ErrInvalid is an identity that does not verify: malformed,
	// altered, expired, of another issuer or audience.
	ErrInvalid = errors.New("identity: invalid")
	// ErrUnavailable is a JWT that may be valid but cannot be checked
	// now: the key set could not be fetched.
	ErrUnavailable = errors.New("identity: key set unavailable")
)

// Options configure a Verifier: where the identity is (Cookie or Header,
// exactly one) and how it is checked (Secret or JWKS, exactly one).
type Options struct {
	// Cookie is the name of the cookie that holds the identity.
	Cookie string
	// Header is the name of the request header that holds it.
	Header string
	// Secret checks a signed identity (admission.MakeIdentity); at
	// least 32 bytes.
	Secret []byte
	// JWKS checks a JWT.
	JWKS *JWKS
}

// JWKS says how to check a JWT.
type JWKS struct {
	// URL is where the key set is served (https, or http on loopback).
	URL string
	// Issuer and Audience must be the token's iss and one of its aud.
	Issuer, Audience string
	// Claim holds the account id (DefaultClaim when empty); it must be
	// a string of 1 to admission.MaxAccountLen bytes.
	Claim string
	// Timeout, CacheFor and MinRefresh: see the Default constants (zero
	// is the default).
	Timeout, CacheFor, MinRefresh time.Duration
	// Client fetches the key set (nil: a client of its own).
	Client *http.Client
}

// Verifier checks identities. Safe for concurrent use.
type Verifier struct {
	cookie, header string
	secret         []byte
	keys           *keySet
	parse          []jwt.ParserOption
	claim          string
}

// New returns the Verifier of o.
func New(o Options) (*Verifier, error) {
	if (o.Cookie == "") == (o.Header == "") {
		return nil, errors.New("identity: name exactly one of a cookie and a header")
	}
	if (len(o.Secret) == 0) == (o.JWKS == nil) {
		return nil, errors.New("identity: give exactly one of a secret and a JWKS")
	}
	v := &Verifier{cookie: o.Cookie, header: o.Header, secret: o.Secret}
	if len(o.Secret) > 0 && len(o.Secret) < 32 {
		return nil, errors.New("identity: the secret must be at least 32 bytes")
	}
	if j := o.JWKS; j != nil {
		if j.URL == "" || j.Issuer == "" || j.Audience == "" {
			return nil, errors.New("identity: a JWKS needs a URL, an issuer and an audience")
		}
		v.claim = j.Claim
		if v.claim == "" {
			v.claim = DefaultClaim
		}
		v.keys = newKeySet(j)
		v.parse = append(v.parse, jwt.WithValidMethods([]string{"RS256", "ES256", "EdDSA"}),
			jwt.WithIssuer(j.Issuer), jwt.WithAudience(j.Audience), jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(), jwt.WithLeeway(leeway))
	}
	return v, nil
}

// Cookie and Header name where the identity is ("" for the other).
func (v *Verifier) Cookie() string { return v.cookie }

// Header names the header that holds the identity ("" when a cookie does).
func (v *Verifier) Header() string { return v.header }

// Verify checks an identity's value at now and returns its account. An
// empty value is ErrInvalid too: the caller tells a missing identity from
// a refused one before calling. ctx bounds a fetch of the key set.
func (v *Verifier) Verify(ctx context.Context, value string, now time.Time) (string, error) {
	if value == "" || len(value) > MaxValueLen {
		return "", fmt.Errorf("%w: empty or too long", ErrInvalid)
	}
	if v.keys == nil {
		a, err := admission.ParseIdentity(v.secret, value, now)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return a, nil
	}
	var fetchErr error
	claims := jwt.MapClaims{}
	parser := jwt.NewParser(append(v.parse[:len(v.parse):len(v.parse)], jwt.WithTimeFunc(func() time.Time { return now }))...)
	_, err := parser.ParseWithClaims(value, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := v.keys.key(ctx, kid, t.Method.Alg(), now)
		if errors.Is(err, ErrUnavailable) {
			fetchErr = err
		}
		return k, err
	})
	if fetchErr != nil {
		return "", fetchErr
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	a, ok := claims[v.claim].(string)
	if !ok || a == "" || len(a) > admission.MaxAccountLen {
		return "", fmt.Errorf("%w: claim %q is not an account id", ErrInvalid, v.claim)
	}
	return a, nil
}

// Prefetch fetches the key set of a JWT verifier now (nothing for a
// signed identity), so that a problem shows at start-up.
func (v *Verifier) Prefetch(ctx context.Context, now time.Time) error {
	if v.keys == nil {
		return nil
	}
	return v.keys.refresh(ctx, now)
}
