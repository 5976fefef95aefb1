package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the request header that carries the signature.
const Header = "X-Waitroom-Signature"

// DefaultTolerance is how far a signature's time may be from the
// receiver's clock when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// maxHeaderLen bounds the header Verify parses: a time and a few v1
// values fit in far less.
const maxHeaderLen = 1024

// Errors of Verify, for errors.Is.
var (
	// ErrMalformed: the header is missing or not t=<unix>,v1=<hex>.
	ErrMalformed = errors.New("signature: malformed header")
	// ErrMismatch: no v1 value is the body's HMAC under the secret.
	ErrMismatch = errors.New("signature: does not match")
	// ErrStale: the signed time is outside the tolerance of now.
	ErrStale = errors.New("signature: timestamp outside tolerance")
)

// Sign returns the header value for body signed with secret at time t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := compute(secret, ts, body)
	b := make([]byte, 0, len("t=,v1=")+len(ts)+hex.EncodedLen(len(mac)))
	b = append(b, "t="...)
	b = append(b, ts...)
	b = append(b, ",v1="...)
	b = hex.AppendEncode(b, mac)
	return string(b)
}

func compute(secret []byte, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks that header (the value of Header) signs body with secret
// and that its time is within tolerance of now (DefaultTolerance when
// tolerance is 0 or less). Unknown keys in the header are ignored, so a
// later scheme (v2=) can be added beside v1. It returns nil or an error
// wrapping ErrMalformed, ErrMismatch or ErrStale.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if header == "" {
		return fmt.Errorf("%w: empty", ErrMalformed)
	}
	if len(header) > maxHeaderLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxHeaderLen)
	}
	var (
		ts     string
		macs   [][]byte
		haveTS bool
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: %q is not key=value", ErrMalformed, part)
		}
		switch k {
		case "t":
			if haveTS {
				return fmt.Errorf("%w: more than one t", ErrMalformed)
			}
			ts, haveTS = v, true
		case "v1":
			mac, err := hex.DecodeString(v)
			if err != nil || len(mac) != sha256.Size {
				return fmt.Errorf("%w: v1 is not a hex SHA-256 HMAC", ErrMalformed)
			}
			macs = append(macs, mac)
		}
	}
	if !haveTS {
		return fmt.Errorf("%w: no t", ErrMalformed)
	}
	if len(macs) == 0 {
		return fmt.Errorf("%w: no v1", ErrMalformed)
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || unix < 0 || ts != strconv.FormatInt(unix, 10) {
		return fmt.Errorf("%w: t is not unix seconds", ErrMalformed)
	}
	want := compute(secret, ts, body)
	matched := false
	for _, mac := range macs {
		// Compare every value, so the time taken does not tell which
		// position matched.
		if hmac.Equal(mac, want) {
			matched = true
		}
	}
	if !matched {
		return ErrMismatch
	}
	// The age is checked after the MAC, so that ErrStale is only ever
	// said of a genuine signature.
	signed := time.Unix(unix, 0)
	if d := now.Sub(signed); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s, now %s", ErrStale, signed.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
