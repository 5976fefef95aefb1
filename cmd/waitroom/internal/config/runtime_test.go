package config

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
)

// writeFile writes data to name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// edKeyFiles writes a fresh Ed25519 key pair as PEM files and returns
// their paths and the public key.
func edKeyFiles(t *testing.T, dir, name string) (priv, pub string, key ed25519.PublicKey) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	priv = writeFile(t, dir, name+".pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	der, err = x509.MarshalPKIXPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	pub = writeFile(t, dir, name+".pub.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return priv, pub, pk
}

func TestKeyLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := "SECRET-5b0e8c2f9a17d4e63c80b1f7a2d59e4c"
	withNewline := writeFile(t, dir, "secret", []byte(secret+"\r\n"))
	short := writeFile(t, dir, "short", []byte("short-SECRET\n"))
	priv, pub, pk := edKeyFiles(t, dir, "ed")
	rsaLike := writeFile(t, dir, "cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}))
	garbage := writeFile(t, dir, "garbage.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("SECRET")}))
	notPEM := writeFile(t, dir, "plain", []byte("SECRET"))
	repeated := writeFile(t, dir, "repeated", []byte(strings.Repeat("SECRET", 8)+"\n"))
	placeholder := writeFile(t, dir, "placeholder", []byte("changeme-SECRET-0123456789abcdefghij\n"))

	tests := []struct {
		name string
		key  Key
		want admission.Key
		err  string // substring; errors must wrap ErrKeyMaterial unless fs
	}{
		{"inline", Key{ID: "k1", Algorithm: AlgHS256, Secret: secret}, admission.Key{ID: "k1", Alg: "HS256", Secret: []byte(secret)}, ""},
		{"file with a newline", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: withNewline}, admission.Key{ID: "k1", Alg: "HS256", Secret: []byte(secret)}, ""},
		{"short file", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: short}, admission.Key{}, `key "k1": the HS256 secret is 12 bytes, want at least 32`},
		{"missing file", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: filepath.Join(dir, "none")}, admission.Key{}, "secret_file " + filepath.Join(dir, "none") + `: key "k1": cannot read it: no such file`},
		{"directory as file", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: dir}, admission.Key{}, "cannot read it: is a directory"},
		{"repeated file", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: repeated}, admission.Key{}, "is a short pattern repeated; waitroom keygen -secret"},
		{"placeholder file", Key{ID: "k1", Algorithm: AlgHS256, SecretFile: placeholder}, admission.Key{}, "placeholder"},
		{"weak inline", Key{ID: "k1", Algorithm: AlgHS256, Secret: strings.Repeat("SECRET!", 6)}, admission.Key{}, `secret: key "k1": the HS256 secret is a short pattern repeated`},
		{"private", Key{ID: "e", Algorithm: AlgEdDSA, PrivateKeyFile: priv}, admission.Key{}, ""},
		{"public", Key{ID: "e", Algorithm: AlgEdDSA, PublicKeyFile: pub}, admission.Key{ID: "e", Alg: "EdDSA", Public: pk}, ""},
		{"public as private", Key{ID: "e", Algorithm: AlgEdDSA, PrivateKeyFile: pub}, admission.Key{}, `a PEM "PUBLIC KEY" block, want "PRIVATE KEY"`},
		{"certificate", Key{ID: "e", Algorithm: AlgEdDSA, PublicKeyFile: rsaLike}, admission.Key{}, `a PEM "CERTIFICATE" block, want "PUBLIC KEY"`},
		{"garbage", Key{ID: "e", Algorithm: AlgEdDSA, PrivateKeyFile: garbage}, admission.Key{}, "not a PKCS#8 private key"},
		{"not PEM", Key{ID: "e", Algorithm: AlgEdDSA, PublicKeyFile: notPEM}, admission.Key{}, "no PEM block"},
		{"no files", Key{ID: "e", Algorithm: AlgEdDSA}, admission.Key{}, "no private_key_file or public_key_file"},
		{"algorithm", Key{ID: "e", Algorithm: "RS256"}, admission.Key{}, `unsupported algorithm "RS256"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.key.Load()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "SECRET") {
					t.Errorf("the error shows key material: %v", err)
				}
				if !errors.Is(err, ErrKeyMaterial) && !errors.Is(err, fs.ErrNotExist) && tt.name != "directory as file" {
					t.Errorf("%v wraps neither ErrKeyMaterial nor fs.ErrNotExist", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "private" {
				eq(t, got.ID, "e")
				eq(t, got.Alg, "EdDSA")
				if !got.Private.Public().(ed25519.PublicKey).Equal(pk) {
					t.Error("private key does not match")
				}
				return
			}
			eq(t, got.ID, tt.want.ID)
			eq(t, got.Alg, tt.want.Alg)
			eq(t, string(got.Secret), string(tt.want.Secret))
			eq(t, string(got.Public), string(tt.want.Public))
		})
	}
}

// TestKeyringRotation signs with the old configuration and verifies with
// the new one, where the old key has become a verification key.
func TestKeyringRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldPriv, oldPub, _ := edKeyFiles(t, dir, "old")
	newSecret := writeFile(t, dir, "new", []byte("c41f0a9e7b2d58e3a6f1c0b9d4e7a2f5b3d8\n"))

	before := Keys{Signing: Key{ID: "ed-2026", Algorithm: AlgEdDSA, PrivateKeyFile: oldPriv}}
	after := Keys{
		Signing: Key{ID: "hs-2027", Algorithm: AlgHS256, SecretFile: newSecret},
		Verify:  []Key{{ID: "ed-2026", Algorithm: AlgEdDSA, PrivateKeyFile: oldPriv}},
	}
	afterPub := Keys{Signing: after.Signing, Verify: []Key{{ID: "ed-2026", Algorithm: AlgEdDSA, PublicKeyFile: oldPub}}}

	old, err := before.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pass := admission.Pass{ID: admission.NewPassID(), Event: "summer", Visitor: admission.NewVisitorID(), Lane: "public",
		IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
	token, err := old.SignPass(pass)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []Keys{after, afterPub} {
		kr, err := keys.Keyring()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kr.VerifyPass(token, "summer", "", now); err != nil {
			t.Errorf("the rotated keyring rejects the old key's pass: %v", err)
		}
		fresh, err := kr.SignPass(pass)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.VerifyPass(fresh, "summer", "", now); err == nil {
			t.Error("the old keyring accepts the new key's pass")
		}
		// A verification key given as a private key file does not sign:
		// the JWKS lists it, the signing key is HS256.
		jwks, err := kr.JWKS()
		if err != nil || !strings.Contains(string(jwks), `"kid":"ed-2026"`) {
			t.Errorf("JWKS %s, %v", jwks, err)
		}
	}

	bad := Keys{Signing: after.Signing, Verify: []Key{{ID: "a", Algorithm: AlgEdDSA}, {ID: "b", Algorithm: AlgHS256, Secret: "short"}}}
	if _, err := bad.Keyring(); err == nil || !strings.Contains(err.Error(), `serve.keys.verify[0].private_key_file: key "a"`) ||
		!strings.Contains(err.Error(), `serve.keys.verify[1].secret: key "b"`) {
		t.Errorf("got %v, want both keys' problems with their paths", err)
	}
	missing := Keys{Signing: Key{ID: "k", Algorithm: AlgEdDSA, PrivateKeyFile: filepath.Join(dir, "none.key")}}
	if _, err := missing.Keyring(); err == nil || !strings.HasPrefix(err.Error(), "serve.keys.signing.private_key_file "+filepath.Join(dir, "none.key")+": ") {
		t.Errorf("got %v, want the signing key's path and file first", err)
	}
	dup := Keys{Signing: after.Signing, Verify: []Key{{ID: "hs-2027", Algorithm: AlgHS256, SecretFile: newSecret}}}
	if _, err := dup.Keyring(); err == nil {
		t.Error("a duplicate key id was accepted")
	}
}

func TestLaneLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := writeFile(t, dir, "fans.txt", []byte("# verified fans\nalice\n\n  bob  \n"))
	secret := strings.Repeat("a", 32)

	l := Lane{Name: "fans", Share: 0.3, AccountSecret: secret, AllowlistFile: list}
	got, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	eq(t, got.Name, "fans")
	eq(t, got.Share, 0.3)
	if got.Access.InviteSecret != nil {
		t.Error("an empty invite secret must stay nil: the engine tests for nil")
	}
	eq(t, string(got.Access.AccountSecret), secret)
	eq(t, got.Access.Allowlist.Len(), 2)
	if !got.Access.Allowlist.Contains("bob") || got.Access.Allowlist.Contains("carol") {
		t.Error("allowlist contents")
	}

	l.AllowlistFile = filepath.Join(dir, "missing.txt")
	if _, err := l.Load(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v", err)
	}
	a, err := LoadAllowlist(list)
	if err != nil || a.Len() != 2 {
		t.Errorf("LoadAllowlist: %v, %v", a, err)
	}
}

func TestEventSchedule(t *testing.T) {
	t.Parallel()
	start := time.Date(2027, 3, 1, 9, 59, 0, 0, time.UTC)
	tests := []struct {
		name                 string
		opens, onSale, close Instant
		want                 [3]time.Time
		err                  string
	}{
		{"relative", AfterStart(0), AfterStart(30 * time.Second), AfterStart(time.Hour),
			[3]time.Time{start, start.Add(30 * time.Second), start.Add(time.Hour)}, ""},
		{"no pre-queue, never closes", Instant{}, At(onSale), Instant{}, [3]time.Time{onSale, onSale, {}}, ""},
		{"opens now, sells at a fixed time", AfterStart(0), At(onSale), Instant{}, [3]time.Time{start, onSale, {}}, ""},
		{"opens after the fixed on-sale", AfterStart(2 * time.Minute), At(onSale), Instant{}, [3]time.Time{},
			`event "e": queue_opens_at 2027-03-01T10:01:00Z is after on_sale_at 2027-03-01T10:00:00Z`},
		{"closes before the on-sale", Instant{}, AfterStart(time.Hour), At(onSale), [3]time.Time{},
			`event "e": closes_at 2027-03-01T10:00:00Z is not after on_sale_at 2027-03-01T10:59:00Z`},
		{"no on-sale with a pre-queue", AfterStart(0), Instant{}, Instant{}, [3]time.Time{}, `event "e" has no on_sale_at`},
		{"open from the start", Instant{}, Instant{}, Instant{}, [3]time.Time{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := DefaultEvent()
			e.ID, e.QueueOpensAt, e.OnSaleAt, e.ClosesAt = "e", tt.opens, tt.onSale, tt.close
			opens, sale, closes, err := e.Schedule(start)
			if tt.err != "" {
				if !errors.Is(err, ErrSchedule) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want ErrSchedule with %q", err, tt.err)
				}
				if _, err := e.AdmissionConfig(start); !errors.Is(err, ErrSchedule) {
					t.Errorf("AdmissionConfig: got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, [3]time.Time{opens, sale, closes}, tt.want)
		})
	}
}

// TestAdmissionConfigRunsTheEngine feeds a configured event, lanes and
// all, to a real admission engine on the embedded store and joins it.
func TestAdmissionConfigRunsTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := strings.Repeat("i", 32)
	data := []byte(`
events:
  - id: demo-concert
    queue_opens_at: now
    on_sale_at: now+30s
    session_duration: 3m
    max_session: 12m
    caps: {max_active: 5}
    controller: {initial_active: 20, min_active: 5, increase: 3}
    lanes:
      - {name: presale, priority: true, invite_secret: "${INVITE}"}
      - {name: public, share: 1}
`)
	c, err := Parse(data, lookupIn(map[string]string{"INVITE": secret}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cfg, err := c.Events[0].AdmissionConfig(start)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, cfg.OnSaleAt, start.Add(30*time.Second).UTC())
	eq(t, cfg.SessionDuration, 3*time.Minute)
	eq(t, cfg.MaxSession, 12*time.Minute)
	eq(t, cfg.Caps.MaxActive, 5)
	eq(t, cfg.Controller.Increase, 3)
	eq(t, len(cfg.Lanes), 2)

	store, err := memstore.Open(memstore.Options{Dir: filepath.Join(dir, "admission")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	eng, err := admission.New(admission.Options{Store: store}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, st, err := eng.Join(ctx, "demo-concert", admission.JoinRequest{}); err != nil || st.Kind != admission.StatusPrequeue {
		t.Errorf("public join: %+v, %v", st, err)
	}
	invite := admission.MakeInvite([]byte(secret), "demo-concert", "code-1", "")
	req := admission.JoinRequest{Lane: "presale", Credential: admission.Credential{Invite: invite}}
	if tk, _, err := eng.Join(ctx, "demo-concert", req); err != nil || tk.Lane != "presale" {
		t.Errorf("presale join with an invite: %+v, %v", tk, err)
	}
	if _, _, err := eng.Join(ctx, "demo-concert", admission.JoinRequest{Lane: "presale"}); !errors.Is(err, admission.ErrNotAllowed) {
		t.Errorf("presale join without an invite: %v", err)
	}
}

func TestParseNetwork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.0.0.1/8", "10.0.0.1/8"}, // not masked: Validate reports it
		{"192.0.2.7", "192.0.2.7/32"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"::1", "::1/128"},
		{"::ffff:192.0.2.7", "192.0.2.7/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"", ""},
		{"10.0.0.0/", ""},
		{"fe80::1%eth0", ""},
		{"example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			p, err := ParseNetwork(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %v, want an error", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, p.String(), tt.want)
		})
	}
	got, err := ParseNetworks([]string{"10.0.0.1/8", "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, len(got), 2)
	eq(t, got[0], netip.MustParsePrefix("10.0.0.0/8"))
	if _, err := ParseNetworks([]string{"x"}); err == nil {
		t.Error("ParseNetworks accepted x")
	}
}

func TestEffectiveValues(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		r    Route
		want RouteAction
	}{
		{Route{Prefix: "/", Event: "e"}, ActionQueue},
		{Route{Prefix: "/"}, ActionPass},
		{Route{Prefix: "/", Event: "e", Action: ActionBlock}, ActionBlock},
	} {
		eq(t, tt.r.EffectiveAction(), tt.want)
	}
	o := DefaultOrigin()
	o.Addresses = []string{"a:1", "b:1"}
	eq(t, o.MaxInFlightLimit(), 2*DefaultOriginMaxConns)
	o.MaxInFlight = 7
	eq(t, o.MaxInFlightLimit(), 7)
}
