package cli

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// The key pair keygen writes is what serve loads: the private key as a
// signing key, the public key as a verify key, and they belong together.
func TestKeygenPairLoads(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "k")
	code, stdout, stderr := run(t, "keygen", "-out", prefix)
	if code != 0 || stderr != "" || !strings.Contains(stdout, prefix+".key") {
		t.Fatalf("keygen: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	st, err := os.Stat(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the private key's mode is %v, want 0600", st.Mode().Perm())
	}
	signing, err := config.Key{ID: "new", Algorithm: "EdDSA", PrivateKeyFile: prefix + ".key"}.Load()
	if err != nil {
		t.Fatalf("the private key does not load as a signing key: %v", err)
	}
	verify, err := config.Key{ID: "new", Algorithm: "EdDSA", PublicKeyFile: prefix + ".pub"}.Load()
	if err != nil {
		t.Fatalf("the public key does not load as a verify key: %v", err)
	}
	if !bytes.Equal(signing.Private.Public().(ed25519.PublicKey), verify.Public) {
		t.Error("the public key file does not hold the private key's public half")
	}

	// Never overwrite: a second run fails and leaves the first pair.
	before, _ := os.ReadFile(prefix + ".key")
	code, _, stderr = run(t, "keygen", "-out", prefix)
	if code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("second keygen: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(prefix + ".key"); string(after) != string(before) {
		t.Fatal("a second keygen replaced the private key")
	}
}

func TestKeygenSecret(t *testing.T) {
	code, stdout, stderr := run(t, "keygen", "-secret")
	secret := strings.TrimSpace(stdout)
	if b, err := hex.DecodeString(secret); code != 0 || stderr != "" || err != nil || len(b) != 32 {
		t.Fatalf("keygen -secret: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, other, _ := run(t, "keygen", "-secret"); strings.TrimSpace(other) == secret {
		t.Fatal("two secrets are the same")
	}
	if len(secret) < config.MinSecretLength {
		t.Fatalf("the secret is %d characters, shorter than the %d a key needs", len(secret), config.MinSecretLength)
	}
	if code, _, stderr := run(t, "keygen", "-secret", "-out", "x"); code != 2 || !strings.Contains(stderr, "drop -out") {
		t.Fatalf("-secret with -out: exit %d, stderr %q", code, stderr)
	}
}
