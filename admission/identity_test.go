package admission

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var identitySecret = []byte("identity-secret-0123456789abcdefgh")

// A known answer, so that an origin's own implementation (in any
// language) can be checked against it; docs/configuration.md shows how
// to make one.
func TestMakeIdentityKnownAnswer(t *testing.T) {
	got := MakeIdentity([]byte("0123456789abcdef0123456789abcdef"), "user-42", time.Unix(1900000000, 0))
	const want = "dXNlci00Mg.1900000000.-ATpAk8pEMQjKXby5FS2_A"
	if got != want {
		t.Fatalf("MakeIdentity = %q; want %q", got, want)
	}
}

func TestParseIdentity(t *testing.T) {
	now := time.Unix(1800000000, 0)
	exp := now.Add(time.Hour)
	good := MakeIdentity(identitySecret, "user-42", exp)
	if a, err := ParseIdentity(identitySecret, good, now); err != nil || a != "user-42" {
		t.Fatalf("ParseIdentity(good) = %q, %v", a, err)
	}
	a64, rest, _ := strings.Cut(good, ".")
	expS, mac, _ := strings.Cut(rest, ".")
	cases := []struct {
		name, identity string
		at             time.Time
		want           error
	}{
		{"expired", good, exp, ErrIdentityExpired},
		{"other secret", MakeIdentity([]byte("another-secret-0123456789abcdefgh"), "user-42", exp), now, errIdentityMAC},
		{"account changed", strictB64.EncodeToString([]byte("user-43")) + "." + rest, now, errIdentityMAC},
		{"expiry changed", a64 + "." + expS + "0." + mac, now, errIdentityMAC},
		{"leading zero", a64 + ".0" + expS + "." + mac, now, errIdentityShape},
		{"signed expiry", a64 + ".+" + expS + "." + mac, now, errIdentityShape},
		{"padded", a64 + "=." + rest, now, errIdentityShape},
		{"two parts", a64 + "." + mac, now, errIdentityShape},
		{"four parts", good + ".x", now, errIdentityShape},
		{"empty account", MakeIdentity(identitySecret, "", exp), now, errIdentityAccount},
		{"NUL in account", MakeIdentity(identitySecret, "a\x00b", exp), now, errIdentityAccount},
		{"long account", MakeIdentity(identitySecret, strings.Repeat("a", MaxAccountLen+1), exp), now, errIdentityShape},
		{"too long", strings.Repeat("a", maxIdentityLen+1), now, errIdentityLong},
		{"empty", "", now, errIdentityShape},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseIdentity(identitySecret, tc.identity, tc.at)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrBadCredential) || a != "" {
				t.Fatalf("ParseIdentity(%q) = %q, %v; want %v", tc.identity, a, err, tc.want)
			}
		})
	}
	if _, err := ParseIdentity(nil, good, now); !errors.Is(err, errIdentitySecret) {
		t.Fatalf("no secret: %v", err)
	}
	long := strings.Repeat("é", MaxAccountLen/2)
	if a, err := ParseIdentity(identitySecret, MakeIdentity(identitySecret, long, exp), now); err != nil || a != long {
		t.Fatalf("longest account: %q, %v", a, err)
	}
}

func FuzzParseIdentity(f *testing.F) {
	now := time.Unix(1800000000, 0)
	f.Add(MakeIdentity(identitySecret, "user-42", now.Add(time.Hour)))
	f.Add(MakeIdentity(identitySecret, "user-42", now.Add(-time.Hour)))
	f.Add("..")
	f.Add("")
	f.Add("QQ.1.QUFBQUFBQUFBQUFBQUFBQQ")
	f.Fuzz(func(t *testing.T, identity string) {
		account, err := ParseIdentity(identitySecret, identity, now)
		if err != nil {
			if !errors.Is(err, ErrBadCredential) || account != "" {
				t.Fatalf("ParseIdentity = %q, %v", account, err)
			}
			return
		}
		if account == "" || len(account) > MaxAccountLen || strings.IndexByte(account, 0) >= 0 {
			t.Fatalf("accepted a malformed identity: %q", account)
		}
		// One identity has one spelling.
		_, rest, _ := strings.Cut(identity, ".")
		expS, _, _ := strings.Cut(rest, ".")
		var secs int64
		for _, c := range expS {
			secs = secs*10 + int64(c-'0')
		}
		if again := MakeIdentity(identitySecret, account, time.Unix(secs, 0)); again != identity {
			t.Fatalf("accepted %q, which is not MakeIdentity's %q", identity, again)
		}
	})
}
