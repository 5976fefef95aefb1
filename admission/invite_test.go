package admission

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

var (
	inviteSecret  = []byte("invite secret of the presale lane, 32+ bytes")
	accountSecret = []byte("account secret shared with the origin")
)

func TestInviteRoundTrip(t *testing.T) {
	for _, c := range []struct{ name, code, account string }{
		{"unbound", "SUMMER-0001", ""},
		{"bound", "SUMMER-0002", "user-42"},
		{"odd bytes", "co.de/+=?\u00e9\xff", "acc.ount\n\xfe"},
		{"longest", strings.Repeat("c", 128), strings.Repeat("a", 128)},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := MakeInvite(inviteSecret, "tour-2030", c.code, c.account)
			if len(inv) > maxInviteLen {
				t.Fatalf("invite is %d bytes", len(inv))
			}
			if strings.ContainsAny(inv, "=+/ ") {
				t.Errorf("invite %q is not base64url without padding", inv)
			}
			code, account, err := ParseInvite(inviteSecret, "tour-2030", inv)
			if err != nil || code != c.code || account != c.account {
				t.Errorf("ParseInvite = %q, %q, %v; want %q, %q", code, account, err, c.code, c.account)
			}
		})
	}
}

// The invite format is a contract with tools that make invites: check it
// against an independent computation.
func TestInviteFormat(t *testing.T) {
	m := hmac.New(sha256.New, inviteSecret)
	m.Write([]byte("wr-invite\x00tour-2030\x00CODE\x00alice"))
	want := tokenB64.EncodeToString([]byte("CODE")) + "." + tokenB64.EncodeToString([]byte("alice")) + "." + tokenB64.EncodeToString(m.Sum(nil)[:16])
	if got := MakeInvite(inviteSecret, "tour-2030", "CODE", "alice"); got != want {
		t.Errorf("MakeInvite = %q, want %q", got, want)
	}
	m = hmac.New(sha256.New, inviteSecret)
	m.Write([]byte("wr-invite\x00tour-2030\x00CODE\x00"))
	want = tokenB64.EncodeToString([]byte("CODE")) + ".." + tokenB64.EncodeToString(m.Sum(nil)[:16])
	if got := MakeInvite(inviteSecret, "tour-2030", "CODE", ""); got != want {
		t.Errorf("unbound MakeInvite = %q, want %q", got, want)
	}
}

func TestInviteRejected(t *testing.T) {
	const event = "tour-2030"
	good := MakeInvite(inviteSecret, event, "SUMMER-0002", "user-42")
	unbound := MakeInvite(inviteSecret, event, "SUMMER-0003", "")
	parts := strings.Split(good, ".")
	otherMAC := strings.Split(MakeInvite(inviteSecret, event, "SUMMER-0009", "user-42"), ".")[2]

	if inv := MakeInvite(inviteSecret, event, "\xfb\xff", ""); !strings.HasPrefix(inv, "-_8.") {
		t.Fatalf("MakeInvite encodes \\xfb\\xff as %q, want the URL alphabet -_8", inv)
	}
	cases := []struct {
		name   string
		secret []byte
		event  string
		invite string
	}{
		{"wrong event", inviteSecret, "tour-2031", good},
		{"event prefix", inviteSecret, "tour-203", good},
		{"wrong secret", []byte("another secret of the presale lane"), event, good},
		{"no secret", nil, event, MakeInvite(nil, event, "C", "")},
		{"code changed", inviteSecret, event, tokenB64.EncodeToString([]byte("SUMMER-0009")) + "." + parts[1] + "." + parts[2]},
		{"account changed", inviteSecret, event, parts[0] + "." + tokenB64.EncodeToString([]byte("user-43")) + "." + parts[2]},
		{"account removed", inviteSecret, event, parts[0] + ".." + parts[2]},
		{"account added to unbound", inviteSecret, event, strings.Replace(unbound, "..", "."+parts[1]+".", 1)},
		{"mac of another code", inviteSecret, event, parts[0] + "." + parts[1] + "." + otherMAC},
		{"mac truncated", inviteSecret, event, good[:len(good)-1]},
		{"mac extended", inviteSecret, event, good + "A"},
		{"mac empty", inviteSecret, event, parts[0] + "." + parts[1] + "."},
		{"padded base64", inviteSecret, event, parts[0] + "=." + parts[1] + "." + parts[2]},
		{"standard base64 alphabet", inviteSecret, event, strings.Replace(MakeInvite(inviteSecret, event, "\xfb\xff", ""), "-_8.", "+/8.", 1)},
		{"non-canonical base64", inviteSecret, event, nonCanonical(parts[0]) + "." + parts[1] + "." + parts[2]},
		{"not base64", inviteSecret, event, "!!." + parts[1] + "." + parts[2]},
		{"two parts", inviteSecret, event, parts[0] + "." + parts[2]},
		{"four parts", inviteSecret, event, good + ".x"},
		{"empty", inviteSecret, event, ""},
		{"dots", inviteSecret, event, ".."},
		{"empty code", inviteSecret, event, MakeInvite(inviteSecret, event, "", "user-42")},
		{"code too long", inviteSecret, event, MakeInvite(inviteSecret, event, strings.Repeat("c", 129), "")},
		{"account too long", inviteSecret, event, MakeInvite(inviteSecret, event, "C", strings.Repeat("a", 129))},
		{"NUL in code", inviteSecret, event, MakeInvite(inviteSecret, event, "a\x00b", "")},
		{"NUL in account", inviteSecret, event, MakeInvite(inviteSecret, event, "a", "b\x00")},
		{"NUL in event", inviteSecret, "tour\x00", MakeInvite(inviteSecret, "tour\x00", "a", "")},
		{"too long", inviteSecret, event, strings.Repeat("A", maxInviteLen+1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, account, err := ParseInvite(c.secret, c.event, c.invite)
			if !errors.Is(err, ErrBadCredential) {
				t.Fatalf("ParseInvite(%q) = %q, %q, %v; want ErrBadCredential", c.invite, code, account, err)
			}
			if code != "" || account != "" {
				t.Errorf("ParseInvite returned %q, %q with an error", code, account)
			}
			if !strings.HasPrefix(err.Error(), "admission: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// nonCanonical re-spells a base64url string whose last character carries
// unused bits with those bits set; a lenient decoder reads the same bytes.
func nonCanonical(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[last^1])
}

// The NUL separator must not let one invite be read as another: without
// refusing NUL, code "x\x00y" unbound and code "x" bound to "y\x00" would
// share a MAC.
func TestInviteSeparatorAmbiguity(t *testing.T) {
	inv := MakeInvite(inviteSecret, "ev", "x\x00y", "")
	parts := strings.Split(inv, ".")
	forged := tokenB64.EncodeToString([]byte("x")) + "." + tokenB64.EncodeToString([]byte("y\x00")) + "." + parts[2]
	if code, account, err := ParseInvite(inviteSecret, "ev", forged); err == nil {
		t.Fatalf("ParseInvite accepted a re-split invite: %q, %q", code, account)
	}
}

func TestAccountProof(t *testing.T) {
	proof := MakeAccountProof(accountSecret, "tour-2030", "user-42")
	m := hmac.New(sha256.New, accountSecret)
	m.Write([]byte("wr-account\x00tour-2030\x00user-42"))
	if want := tokenB64.EncodeToString(m.Sum(nil)[:16]); proof != want {
		t.Fatalf("MakeAccountProof = %q, want %q", proof, want)
	}
	if !CheckAccountProof(accountSecret, "tour-2030", "user-42", proof) {
		t.Fatal("CheckAccountProof refuses a good proof")
	}
	invite := MakeInvite(accountSecret, "tour-2030", "user-42", "")
	for _, c := range []struct {
		name                  string
		secret                []byte
		event, account, proof string
	}{
		{"wrong event", accountSecret, "tour-2031", "user-42", proof},
		{"wrong account", accountSecret, "tour-2030", "user-43", proof},
		{"account prefix", accountSecret, "tour-2030", "user-4", proof},
		{"wrong secret", []byte("another account secret, long enough"), "tour-2030", "user-42", proof},
		{"no secret", nil, "tour-2030", "user-42", MakeAccountProof(nil, "tour-2030", "user-42")},
		{"empty account", accountSecret, "tour-2030", "", MakeAccountProof(accountSecret, "tour-2030", "")},
		{"long account", accountSecret, "tour-2030", strings.Repeat("a", 129), MakeAccountProof(accountSecret, "tour-2030", strings.Repeat("a", 129))},
		{"NUL in event", accountSecret, "tour\x00", "a", MakeAccountProof(accountSecret, "tour\x00", "a")},
		{"truncated", accountSecret, "tour-2030", "user-42", proof[:len(proof)-1]},
		{"extended", accountSecret, "tour-2030", "user-42", proof + "A"},
		{"padded", accountSecret, "tour-2030", "user-42", proof + "=="},
		{"non-canonical", accountSecret, "tour-2030", "user-42", nonCanonical(proof)},
		{"empty", accountSecret, "tour-2030", "user-42", ""},
		{"invite MAC as proof", accountSecret, "tour-2030", "user-42", strings.Split(invite, ".")[2]},
	} {
		t.Run(c.name, func(t *testing.T) {
			if CheckAccountProof(c.secret, c.event, c.account, c.proof) {
				t.Errorf("CheckAccountProof(%q, %q, %q) = true", c.event, c.account, c.proof)
			}
		})
	}
}

func FuzzParseInvite(f *testing.F) {
	f.Add("tour-2030", MakeInvite(inviteSecret, "tour-2030", "SUMMER-0001", ""))
	f.Add("tour-2030", MakeInvite(inviteSecret, "tour-2030", "SUMMER-0002", "user-42"))
	f.Add("tour-2030", MakeInvite(inviteSecret, "tour-2031", "SUMMER-0002", "user-42"))
	f.Add("ev", "..")
	f.Add("", "")
	f.Add("ev", "QQ.QQ.QUFBQUFBQUFBQUFBQUFBQQ")
	f.Fuzz(func(t *testing.T, event, invite string) {
		code, account, err := ParseInvite(inviteSecret, event, invite)
		if err != nil {
			if !errors.Is(err, ErrBadCredential) {
				t.Fatalf("error %v is not ErrBadCredential", err)
			}
			if code != "" || account != "" {
				t.Fatalf("values with an error: %q, %q", code, account)
			}
			return
		}
		if code == "" || len(code) > maxInviteField || len(account) > maxInviteField ||
			strings.IndexByte(code, 0) >= 0 || strings.IndexByte(account, 0) >= 0 {
			t.Fatalf("accepted a malformed invite: %q, %q", code, account)
		}
		// One invite has one spelling.
		if again := MakeInvite(inviteSecret, event, code, account); again != invite {
			t.Fatalf("accepted %q, which is not MakeInvite's %q", invite, again)
		}
	})
}
