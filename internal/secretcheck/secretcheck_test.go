package secretcheck

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func TestWeak(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, secret string
		weak         string // substring of the reason; "" for a good secret
	}{
		{"hex from keygen", "9f3c2a7be01d4c58a6f29b3e7d10c4a5e8b2f6d0193c7a4e5b8d2f0c6a1e3b97", ""},
		{"base64", "q3Zt8Yp1vL0xN2rK7wB9sD4fH6jM5cE1aG8uT0iO2kQ=", ""},
		{"fixture-like", "signing-0123456789abcdef0123456789-prod", ""},
		{"empty", "", "too short"},
		{"31 bytes", strings.Repeat("k", 0) + "9f3c2a7be01d4c58a6f29b3e7d10c4a", "too short"},
		{"one character", strings.Repeat("a", 64), "one character repeated"},
		{"two characters", strings.Repeat("ab", 32), "short pattern"},
		{"pattern of 16", strings.Repeat("0123456789abcdef", 2), "short pattern"},
		{"pattern cut short", strings.Repeat("hook-", 7) + "hoo", "short pattern"},
		{"few distinct", "aabbaabbabababbbaaabbbabababaabbaabbbaab", "too few different"},
		{"digits 1 and 2 and 3", "1231321231121323213213123121322131", "too few different"},
		{"alphabet", "abcdefghijklmnopqrstuvwxyzabcdefgh", "consecutive"},
		{"digits", "01234567890123456789012345678901234", "short pattern"},
		{"descending", "zyxwvutsrqponmlkjihgfedcbazyxwvuts", "consecutive"},
		{"changeme", "changeme-changeme-please-0123456789", "placeholder"},
		{"CHANGE_ME upper", "CHANGE_ME_TO_A_RANDOM_STRING_0123456789", "placeholder"},
		{"example", "this-is-an-example-signing-key-2026", "placeholder"},
		{"unexpanded", "${WAITROOM_SIGNING_SECRET}-0123456789ab", "placeholder"},
		{"pasted command", "$(openssl rand -hex 32)aaaaaaaaaaaaaaaa", "placeholder"},
		{"ellipsis", "0x4AAA...................................", "placeholder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Weak(tt.secret, 32)
			if tt.weak == "" && got != "" || tt.weak != "" && !strings.Contains(got, tt.weak) {
				t.Fatalf("Weak(%q) = %q, want %q", tt.secret, got, tt.weak)
			}
			if got != "" && len(tt.secret) > 3 && strings.Contains(got, tt.secret) {
				t.Errorf("the reason quotes the secret: %q", got)
			}
		})
	}
}

// TestRandomSecretsPass checks that what keygen and openssl make is never
// refused: many random hex and base64 secrets of the minimum length.
func TestRandomSecretsPass(t *testing.T) {
	t.Parallel()
	for i := 0; i < 5000; i++ {
		b := make([]byte, 16)
		rand.Read(b)
		for _, s := range []string{hex.EncodeToString(b), base64.StdEncoding.EncodeToString(append(b, b[:8]...))} {
			if r := Weak(s, 32); r != "" {
				t.Fatalf("random secret %q refused: %s", s, r)
			}
		}
	}
}

func FuzzWeak(f *testing.F) {
	for _, s := range []string{"", "a", "abcabc", "9f3c2a7be01d4c58a6f29b3e7d10c4a5", "zyx", "${"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Weak(s, 32)
		if len(s) < 32 && r == "" {
			t.Fatalf("a %d-byte secret passed", len(s))
		}
		if r != "" && len(s) >= 8 && strings.Contains(r, s) {
			t.Fatalf("the reason quotes the secret")
		}
	})
}
