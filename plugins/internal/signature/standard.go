package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com/).
const (
	// IDHeader carries the message id, the same on every attempt.
	IDHeader = "webhook-id"
	// TimestampHeader carries the unix seconds the attempt was signed at.
	TimestampHeader = "webhook-timestamp"
	// StandardHeader carries space-separated signatures, each
	// "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
	StandardHeader = "webhook-signature"
)

// SecretPrefix marks a secret given the Standard Webhooks way: the prefix
// followed by the key's bytes in base64.
const SecretPrefix = "whsec_"

// Key bounds of a whsec_ secret, in decoded bytes (the spec's 24 to 64).
const (
	MinStandardKey = 24
	MaxStandardKey = 64
)

// ErrSecret: a whsec_ secret whose rest is not base64 of 24 to 64 bytes.
var ErrSecret = errors.New("signature: a whsec_ secret must be whsec_ and the base64 of 24 to 64 random bytes")

// maxIDLen bounds the message id Verify accepts.
const maxIDLen = 256

// Key returns the HMAC key of a configured secret: the decoded bytes of a
// whsec_<base64> secret, else the secret's own bytes. A receiver using a
// Standard Webhooks library is given the whsec_ form; for a plain secret
// that is "whsec_" + base64(secret).
func Key(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < MinStandardKey || len(key) > MaxStandardKey {
		return nil, ErrSecret
	}
	return key, nil
}

// SignStandard returns the webhook-timestamp and webhook-signature values
// of body, sent as message id at time t, under key.
func SignStandard(key []byte, id string, t time.Time, body []byte) (timestamp, sig string) {
	timestamp = strconv.FormatInt(t.Unix(), 10)
	mac := computeStandard(key, id, timestamp, body)
	return timestamp, "v1," + base64.StdEncoding.EncodeToString(mac)
}

func computeStandard(key []byte, id, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// VerifyStandard checks a Standard Webhooks delivery: id, timestamp and
// sigs are the three headers' values. It passes when one v1 signature in
// sigs is the HMAC of "id.timestamp.body" under key and the timestamp is
// within tolerance of now (DefaultTolerance when 0 or less). Signatures
// of other versions (v1a, ...) are skipped. It returns nil or an error
// wrapping ErrMalformed, ErrMismatch or ErrStale.
func VerifyStandard(key []byte, id, timestamp, sigs string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	switch {
	case id == "":
		return fmt.Errorf("%w: no %s", ErrMalformed, IDHeader)
	case len(id) > maxIDLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrMalformed, IDHeader, maxIDLen)
	case strings.ContainsAny(id, ". \t"):
		// The id is the first part of the signed text: a dot in it would
		// let one (id, timestamp) pair stand for another.
		return fmt.Errorf("%w: %s contains a dot or a space", ErrMalformed, IDHeader)
	case sigs == "":
		return fmt.Errorf("%w: no %s", ErrMalformed, StandardHeader)
	case len(sigs) > maxHeaderLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrMalformed, StandardHeader, maxHeaderLen)
	}
	unix, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || unix < 0 || timestamp != strconv.FormatInt(unix, 10) {
		return fmt.Errorf("%w: %s is not unix seconds", ErrMalformed, TimestampHeader)
	}
	want := computeStandard(key, id, timestamp, body)
	matched, v1 := false, 0
	for _, part := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(part, ",")
		if !ok {
			return fmt.Errorf("%w: %q is not version,signature", ErrMalformed, part)
		}
		if version != "v1" {
			continue
		}
		mac, err := base64.StdEncoding.DecodeString(value)
		if err != nil || len(mac) != sha256.Size {
			return fmt.Errorf("%w: a v1 signature is not a base64 SHA-256 HMAC", ErrMalformed)
		}
		v1++
		if hmac.Equal(mac, want) {
			matched = true
		}
	}
	if v1 == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrMalformed)
	}
	if !matched {
		return ErrMismatch
	}
	signed := time.Unix(unix, 0)
	if d := now.Sub(signed); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s, now %s", ErrStale, signed.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
