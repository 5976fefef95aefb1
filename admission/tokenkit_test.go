package admission

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func splitToken(t testing.TB, tok string) (hdr, payload, sig string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d segments", tok, len(parts))
	}
	return parts[0], parts[1], parts[2]
}

func decodeSeg(t testing.TB, seg string) []byte {
	t.Helper()
	b, err := tokenB64.DecodeString(seg)
	if err != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	return b
}

func decodeToken(t testing.TB, tok string) (header, payload map[string]any) {
	t.Helper()
	h, p, _ := splitToken(t, tok)
	if err := json.Unmarshal(decodeSeg(t, h), &header); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(decodeSeg(t, p), &payload); err != nil {
		t.Fatal(err)
	}
	return header, payload
}

func expiryOf(t testing.TB, tok string) time.Time {
	t.Helper()
	_, p := decodeToken(t, tok)
	return time.Unix(int64(p["exp"].(float64)), 0)
}

func sigOf(t testing.TB, tok string) string {
	_, _, s := splitToken(t, tok)
	return s
}

func flipBit(t testing.TB, sig string) string {
	t.Helper()
	b := decodeSeg(t, sig)
	b[len(b)/2] ^= 0x10
	return tokenB64.EncodeToString(b)
}

func encodeJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return tokenB64.EncodeToString(b)
}

// nonCanonicalIfPossible is nonCanonical(s) when s's last character has
// unused bits, else s with a character changed.
func nonCanonicalIfPossible(s string) string {
	if len(s)%4 == 0 {
		if s[len(s)-1] == 'A' {
			return s[:len(s)-1] + "B"
		}
		return s[:len(s)-1] + "A"
	}
	return nonCanonical(s)
}

func cloneClaims(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// craft builds a token from a header, an encoded payload and raw signature
// bytes.
func craftToken(t testing.TB, header map[string]any, payload string, sig []byte) string {
	return encodeJSON(t, header) + "." + payload + "." + tokenB64.EncodeToString(sig)
}

func craftHMAC(t testing.TB, header map[string]any, payload string, secret []byte) string {
	signing := encodeJSON(t, header) + "." + payload
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signing))
	return signing + "." + tokenB64.EncodeToString(m.Sum(nil))
}

func craftHMAC512(t testing.TB, header map[string]any, payload string, secret []byte) string {
	signing := encodeJSON(t, header) + "." + payload
	sig, err := jwt.SigningMethodHS512.Sign(signing, secret)
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + tokenB64.EncodeToString(sig)
}

func craftEd(t testing.TB, header map[string]any, payload string, priv ed25519.PrivateKey) string {
	signing := encodeJSON(t, header) + "." + payload
	return signing + "." + tokenB64.EncodeToString(ed25519.Sign(priv, []byte(signing)))
}

// resign signs an encoded payload under header with key, properly.
func resign(t testing.TB, key Key, header map[string]any, payload string) string {
	t.Helper()
	switch key.Alg {
	case "HS256":
		return craftHMAC(t, header, payload, key.Secret)
	case "EdDSA":
		return craftEd(t, header, payload, key.Private)
	}
	t.Fatalf("alg %q", key.Alg)
	return ""
}

func resignRaw(t testing.TB, key Key, header map[string]any, payload []byte) string {
	t.Helper()
	return resign(t, key, header, tokenB64.EncodeToString(payload))
}
