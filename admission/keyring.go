package admission

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/internal/jsonstrict"
)

// Token algorithms a Key may use.
const (
	algHS256 = "HS256" // HMAC-SHA256 with a shared secret
	algEdDSA = "EdDSA" // Ed25519 (RFC 8037)
)

// Key is one token key of a Keyring: a shared secret (HS256) or an
// Ed25519 key pair (EdDSA). NewKeyring copies what it keeps, so a Key may
// be reused or zeroed after the call.
type Key struct {
	// ID is the key id, the JWT header's kid: non-empty, at most 64 bytes,
	// unique within a Keyring.
	ID string
	// Alg is "HS256" or "EdDSA".
	Alg string
	// Secret is the HS256 shared secret, at least 32 bytes.
	Secret []byte
	// Private is the EdDSA signing key; nil for a verification-only key.
	Private ed25519.PrivateKey
	// Public is the EdDSA verification key; derived from Private when nil
	// (and, when both are set, it must be Private's public key).
	Public ed25519.PublicKey
}

// Keyring signs tickets and passes with one key and verifies them with
// any of its keys (the signing key and the verification keys), which makes
// key rotation possible: add the new key as the signing key and keep the
// old one as a verification key until the tokens it signed have expired.
//
// A token's kid selects the key and the key fixes the algorithm: a token
// whose header names another algorithm (alg "none", HS256 with an EdDSA
// key's kid, ...) is rejected.
//
// A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	signer   *keyEntry
	keys     []*keyEntry          // signing key first, then verification keys in order
	byID     map[string]*keyEntry // kid → key
	byHeader map[string]*keyEntry // canonical encoded header → key (fast path)
}

// keyEntry is a validated key with everything verification needs built
// once: no allocation to select a key on the hot path.
type keyEntry struct {
	id        string
	alg       string
	method    jwt.SigningMethod
	signKey   any // []byte (HS256) or ed25519.PrivateKey; nil: verification only
	verifyKey any // []byte (HS256) or ed25519.PublicKey
	public    ed25519.PublicKey
	header    string      // base64url of the header SignTicket and SignPass write
	parser    *jwt.Parser // accepts exactly this key's algorithm
	keyfunc   jwt.Keyfunc
}

// NewKeyring returns a keyring that signs with signing and verifies with
// signing and every key of verify. Every key is validated (algorithm, key
// sizes, a private key consistent with its public key) and key ids must
// be unique; all problems are reported together. The signing key must be
// able to sign (a secret, or an Ed25519 private key).
func NewKeyring(signing Key, verify ...Key) (*Keyring, error) {
	k := &Keyring{
		byID:     make(map[string]*keyEntry, 1+len(verify)),
		byHeader: make(map[string]*keyEntry, 1+len(verify)),
	}
	var errs []error
	all := append([]Key{signing}, verify...)
	for i, key := range all {
		e, err := newKeyEntry(key, i == 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := k.byID[e.id]; dup {
			errs = append(errs, fmt.Errorf("admission: key %q: duplicate key id", e.id))
			continue
		}
		k.byID[e.id] = e
		k.byHeader[e.header] = e
		k.keys = append(k.keys, e)
		if i == 0 {
			k.signer = e
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return k, nil
}

// KeptBy reports whether next verifies every token k verifies: each of
// k's keys is in next under the same id, algorithm and key. A proxy that
// caches verified tokens must forget them when it is not so (a key was
// retired).
func (k *Keyring) KeptBy(next *Keyring) bool {
	for _, e := range k.keys {
		n := next.byID[e.id]
		if n == nil || n.alg != e.alg || !sameKey(n.verifyKey, e.verifyKey) {
			return false
		}
	}
	return true
}

func sameKey(a, b any) bool {
	switch a := a.(type) {
	case []byte:
		b, ok := b.([]byte)
		return ok && bytes.Equal(a, b)
	case ed25519.PublicKey:
		b, ok := b.(ed25519.PublicKey)
		return ok && a.Equal(b)
	}
	return false
}

// newKeyEntry validates key and builds its entry.
func newKeyEntry(key Key, signing bool) (*keyEntry, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("admission: key %q: "+format, append([]any{key.ID}, args...)...)
	}
	switch {
	case key.ID == "":
		return nil, fail("empty key id")
	case len(key.ID) > maxKeyIDLen:
		return nil, fail("key id longer than %d bytes", maxKeyIDLen)
	case !utf8.ValidString(key.ID):
		return nil, fail("key id is not valid UTF-8")
	}
	e := &keyEntry{id: key.ID, alg: key.Alg}
	switch key.Alg {
	case algHS256:
		if len(key.Private) != 0 || len(key.Public) != 0 {
			return nil, fail("HS256 key with Ed25519 key material")
		}
		if len(key.Secret) < minSecretLen {
			return nil, fail("HS256 secret shorter than %d bytes", minSecretLen)
		}
		secret := bytes.Clone(key.Secret)
		e.method = jwt.SigningMethodHS256
		e.signKey, e.verifyKey = secret, secret
	case algEdDSA:
		if len(key.Secret) != 0 {
			return nil, fail("EdDSA key with an HMAC secret")
		}
		var pub ed25519.PublicKey
		if key.Private != nil {
			if len(key.Private) != ed25519.PrivateKeySize {
				return nil, fail("Ed25519 private key is %d bytes, want %d", len(key.Private), ed25519.PrivateKeySize)
			}
			priv := ed25519.NewKeyFromSeed(key.Private.Seed())
			if !priv.Equal(key.Private) {
				return nil, fail("Ed25519 private key does not match its seed")
			}
			pub = priv.Public().(ed25519.PublicKey)
			e.signKey = priv
		}
		if key.Public != nil {
			if len(key.Public) != ed25519.PublicKeySize {
				return nil, fail("Ed25519 public key is %d bytes, want %d", len(key.Public), ed25519.PublicKeySize)
			}
			if pub != nil && !pub.Equal(key.Public) {
				return nil, fail("Ed25519 public key does not match the private key")
			}
			pub = bytes.Clone(key.Public)
		}
		if pub == nil {
			return nil, fail("EdDSA key without a public or private key")
		}
		e.method = jwt.SigningMethodEdDSA
		e.public = pub
		e.verifyKey = pub
	case "":
		return nil, fail("no algorithm (want HS256 or EdDSA)")
	default:
		return nil, fail("unsupported algorithm %q (want HS256 or EdDSA)", key.Alg)
	}
	if signing && e.signKey == nil {
		return nil, fail("the signing key has no private key")
	}

	hdr, err := json.Marshal(map[string]string{"alg": e.alg, "kid": e.id, "typ": "JWT"})
	if err != nil {
		return nil, fail("encode header: %v", err)
	}
	e.header = base64.RawURLEncoding.EncodeToString(hdr)
	e.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{e.alg}),
		jwt.WithoutClaimsValidation(), // times are checked with the caller's now
		jwt.WithStrictDecoding(),
	)
	e.keyfunc = func(t *jwt.Token) (any, error) {
		// The parser already refused any other algorithm; the header
		// must also name this key (the fast path matched it by its
		// encoded header, the slow path by a separate decode).
		if alg, _ := t.Header["alg"].(string); alg != e.alg {
			return nil, errAlgMismatch
		}
		if kid, _ := t.Header["kid"].(string); kid != e.id {
			return nil, errKidMismatch
		}
		return e.verifyKey, nil
	}
	return e, nil
}

// JWKS returns the EdDSA public keys of the keyring (signing key first) as
// a JSON Web Key Set (RFC 7517, keys as RFC 8037 OKP keys), for origins
// that verify passes themselves. HS256 keys never appear; a keyring
// without EdDSA keys gives {"keys":[]}.
func (k *Keyring) JWKS() ([]byte, error) {
	type jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
		Alg string `json:"alg"`
		Use string `json:"use"`
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, e := range k.keys {
		if e.alg != algEdDSA {
			continue
		}
		set.Keys = append(set.Keys, jwk{
			Kty: "OKP",
			Crv: "Ed25519",
			X:   base64.RawURLEncoding.EncodeToString(e.public),
			Kid: e.id,
			Alg: algEdDSA,
			Use: "sig",
		})
	}
	return json.Marshal(set)
}

// lookup returns the key a token's kid names. A header the keyring writes
// itself is found by a map lookup; any other is decoded (slow path).
func (k *Keyring) lookup(token string) (*keyEntry, error) {
	if len(token) > maxTokenLen {
		return nil, errTooLong
	}
	hdr, _, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errMalformed
	}
	if e := k.byHeader[hdr]; e != nil {
		return e, nil
	}
	if len(hdr) > maxHeaderLen {
		return nil, errMalformed
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(hdr)
	if err != nil {
		return nil, errMalformed
	}
	var kid string
	err = jsonstrict.Decode(raw, func(r *jsonstrict.Reader, name []byte) (err error) {
		switch {
		case string(name) != "kid":
			return r.Skip() // the parser reads the rest of the header
		case r.Null():
			return nil
		}
		kid, err = r.String("kid")
		return err
	})
	if err != nil {
		return nil, errMalformed
	}
	if kid == "" {
		return nil, errNoKid
	}
	e := k.byID[kid]
	if e == nil {
		return nil, errUnknownKid
	}
	return e, nil
}
