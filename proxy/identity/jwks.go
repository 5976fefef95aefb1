package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// maxKeySetBytes bounds a fetched key set.
const maxKeySetBytes = 1 << 20

// minRSABits is the smallest RSA modulus a key set may hold.
const minRSABits = 2048

// keySet is the origin's JWKS, fetched on demand and cached. A fetch
// holds the lock, so concurrent verifiers wait for it (bounded by the
// timeout) rather than fetch again.
type keySet struct {
	url                           string
	client                        *http.Client
	timeout, cacheFor, minRefresh time.Duration

	mu      sync.Mutex
	keys    map[string]jwk // kid → key
	fetched time.Time      // when keys were fetched (zero: never)
	tried   time.Time      // when a fetch was last tried
}

// jwk is one usable key: its public key and the one algorithm it signs
// with.
type jwk struct {
	alg string
	key any
}

func newKeySet(j *JWKS) *keySet {
	k := &keySet{url: j.URL, client: j.Client, timeout: j.Timeout, cacheFor: j.CacheFor, minRefresh: j.MinRefresh}
	if k.client == nil {
		k.client = &http.Client{}
	}
	if k.timeout <= 0 {
		k.timeout = DefaultTimeout
	}
	if k.cacheFor <= 0 {
		k.cacheFor = DefaultCacheFor
	}
	if k.minRefresh <= 0 {
		k.minRefresh = DefaultMinRefresh
	}
	return k
}

// key returns the key kid names for a token signed with alg. An empty
// kid names the set's only key. The set is fetched when it is stale or
// does not hold kid, at most once per minRefresh; ErrUnavailable when
// no set was ever fetched and this fetch failed.
func (k *keySet) key(ctx context.Context, kid, alg string, now time.Time) (any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.lookup(kid)
	stale := k.fetched.IsZero() || now.Sub(k.fetched) >= k.cacheFor
	if (!ok || stale) && (k.tried.IsZero() || now.Sub(k.tried) >= k.minRefresh) {
		err := k.fetchLocked(ctx, now)
		if err != nil && k.fetched.IsZero() {
			return nil, err
		}
		key, ok = k.lookup(kid)
	}
	switch {
	case !ok && k.fetched.IsZero():
		return nil, ErrUnavailable
	case !ok:
		return nil, fmt.Errorf("identity: no key %q in the key set", kid)
	case key.alg != alg:
		return nil, fmt.Errorf("identity: key %q signs with %s, not %s", kid, key.alg, alg)
	}
	return key.key, nil
}

// lookup finds kid in the keys held (called with mu held).
func (k *keySet) lookup(kid string) (jwk, bool) {
	if kid == "" {
		if len(k.keys) == 1 {
			for _, key := range k.keys {
				return key, true
			}
		}
		return jwk{}, false
	}
	key, ok := k.keys[kid]
	return key, ok
}

// refresh fetches the key set now.
func (k *keySet) refresh(ctx context.Context, now time.Time) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fetchLocked(ctx, now)
}

// fetchLocked fetches and parses the key set; a failure keeps the keys
// held. Called with mu held.
func (k *keySet) fetchLocked(ctx context.Context, now time.Time) error {
	k.tried = now
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, k.url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if len(body) > maxKeySetBytes {
		return fmt.Errorf("%w: key set larger than %d bytes", ErrUnavailable, maxKeySetBytes)
	}
	keys, err := parseKeySet(body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	k.keys, k.fetched = keys, now
	return nil
}

// rawKey is a JWK as served (RFC 7517, 7518, 8037), the fields used.
type rawKey struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseKeySet reads a JWKS document into its usable signing keys by kid:
// RSA (RS256, at least 2048 bits), EC P-256 (ES256) and Ed25519 (EdDSA).
// Keys for encryption, of other types or algorithms, or malformed are
// left out; a document with no usable key, or two keys with one kid, is
// an error. A key without a kid is kept under "" (a token without a kid
// may use it when it is the only key).
func parseKeySet(doc []byte) (map[string]jwk, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("identity: key set is not JSON: %w", err)
	}
	keys := map[string]jwk{}
	for _, raw := range set.Keys {
		var r rawKey
		if json.Unmarshal(raw, &r) != nil || (r.Use != "" && r.Use != "sig") {
			continue
		}
		key, err := parseKey(&r)
		if err != nil {
			continue
		}
		if _, dup := keys[r.Kid]; dup {
			return nil, fmt.Errorf("identity: key set has two keys %q", r.Kid)
		}
		keys[r.Kid] = key
	}
	if len(keys) == 0 {
		return nil, errors.New("identity: key set has no usable signing key")
	}
	return keys, nil
}

var b64 = base64.RawURLEncoding.Strict()

// parseKey reads one JWK.
func parseKey(r *rawKey) (jwk, error) {
	var k jwk
	switch r.Kty {
	case "RSA":
		n, err1 := b64.DecodeString(r.N)
		e, err2 := b64.DecodeString(r.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return k, errors.New("bad RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits || pub.E < 3 || pub.E%2 == 0 {
			return k, errors.New("weak RSA key")
		}
		k = jwk{alg: "RS256", key: pub}
	case "EC":
		x, err1 := b64.DecodeString(r.X)
		y, err2 := b64.DecodeString(r.Y)
		if r.Crv != "P-256" || err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return k, errors.New("bad EC key")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return k, err
		}
		k = jwk{alg: "ES256", key: pub}
	case "OKP":
		x, err := b64.DecodeString(r.X)
		if r.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return k, errors.New("bad OKP key")
		}
		k = jwk{alg: "EdDSA", key: ed25519.PublicKey(x)}
	default:
		return k, errors.New("unsupported key type")
	}
	if r.Alg != "" && r.Alg != k.alg {
		return k, errors.New("key for another algorithm")
	}
	return k, nil
}
