package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/fsutil"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// startConfig is a serve configuration whose every listener takes a free
// port; extra is appended (YAML keys not already set here).
func startConfig(t *testing.T, dir, serveExtra, extra string) string {
	t.Helper()
	secret := make([]byte, 32)
	rand.Read(secret)
	listen := "\n  listen: 127.0.0.1:0"
	if strings.Contains(serveExtra, "listen: ") && !strings.Contains(serveExtra, "tls:") {
		listen = ""
	}
	origins := "\norigins: [{name: shop, addresses: [\"127.0.0.1:9\"]}]"
	if strings.Contains(extra, "origins:") {
		origins = ""
	}
	admin := "\nadmin: {listen: \"\"}"
	if strings.Contains(extra, "admin:") {
		admin = ""
	}
	return fmt.Sprintf(`log: {level: info}
serve:%s
  keys:
    signing:
%s
%s%s%s
%s
`, listen, indentKeys(serveExtra, hex.EncodeToString(secret)), serveRest(serveExtra), admin, origins, extraWithDefaults(extra, dir))
}

// indentKeys returns the signing key's lines: the key lines of serveExtra
// (those starting with "key:"), or an inline random secret.
func indentKeys(serveExtra, secret string) string {
	var keys []string
	for _, l := range strings.Split(serveExtra, "\n") {
		if k, ok := strings.CutPrefix(l, "key:"); ok {
			keys = append(keys, "      "+strings.TrimSpace(k))
		}
	}
	if len(keys) == 0 {
		return "      secret: " + secret
	}
	return strings.Join(keys, "\n")
}

// serveRest returns serveExtra's lines that are not key lines, indented
// into the serve section.
func serveRest(serveExtra string) string {
	var rest []string
	for _, l := range strings.Split(serveExtra, "\n") {
		if l != "" && !strings.HasPrefix(l, "key:") {
			rest = append(rest, "  "+l)
		}
	}
	return strings.Join(rest, "\n")
}

// extraWithDefaults adds the embedded admission store in dir unless extra
// configures admission itself.
func extraWithDefaults(extra, dir string) string {
	if !strings.Contains(extra, "admission:") {
		extra += "\nadmission: {data_dir: " + filepath.Join(dir, "admission") + "}"
	}
	return extra
}

// busyAddr returns the address of a listener that stays open until the
// test ends.
func busyAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// deadRedis returns a redis:// URL on a loopback port nobody listens on.
func deadRedis(t *testing.T) string {
	t.Helper()
	port, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
}

// lockDir holds dir's lock, as a running waitroom does, until the test
// ends.
func lockDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsutil.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unlock() })
	return dir
}

func writeIn(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkStartFailure asserts what every start-up failure must look like:
// exit 1, one line on stderr that names the setting and the cause, and no
// panic.
func checkStartFailure(t *testing.T, code int, stdout, stderr string, want ...string) {
	t.Helper()
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if strings.Contains(stderr+stdout, "panic") || strings.Contains(stderr+stdout, "goroutine") {
		t.Fatalf("a panic:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr has %d lines, want exactly one:\n%s", len(lines), stderr)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("stderr %q does not say %q", lines[0], w)
		}
	}
}

// TestServeStartFailures starts waitroom serve on every kind of broken
// setting: each ends with exit 1 and one line naming the setting.
func TestServeStartFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeIn(t, dir, "a-file", "not a directory")
	notPEM := writeIn(t, dir, "not.pem", "this is no certificate")
	edPriv := writeEdKey(t, dir)
	short := writeIn(t, dir, "short-secret", "0123456789abcdef\n")
	weak := writeIn(t, dir, "weak-secret", strings.Repeat("ab", 24)+"\n")
	badPEM := writeIn(t, dir, "bad.key", "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
	missing := filepath.Join(dir, "missing")
	inUse := busyAddr(t)
	adminInUse := busyAddr(t)

	tests := []struct {
		name              string
		serveExtra, extra string
		want              []string
	}{
		{"serve.listen in use", "listen: " + inUse, "",
			[]string{"waitroom: serve.listen " + inUse + ": address already in use"}},
		{"admin.listen in use", "", "admin: {listen: " + adminInUse + ", token: 9c1e0b5d2f8a4c6e7f3a}",
			[]string{"waitroom: admin.listen " + adminInUse + ": address already in use"}},
		{"tls cert missing", "tls: {listen: 127.0.0.1:0, cert_file: " + missing + ", key_file: " + notPEM + "}", "",
			[]string{"waitroom: serve.tls.cert_file " + missing + ": no such file or directory"}},
		{"tls cert not PEM", "tls: {listen: 127.0.0.1:0, cert_file: " + notPEM + ", key_file: " + notPEM + "}", "",
			[]string{"waitroom: serve.tls.cert_file " + notPEM + ": no PEM CERTIFICATE block"}},
		{"tls key a directory", "tls: {listen: 127.0.0.1:0, cert_file: " + notPEM + ", key_file: " + dir + "}", "",
			[]string{"waitroom: serve.tls.key_file " + dir + ": is a directory"}},
		{"admission.data_dir locked", "", "admission: {data_dir: " + lockDir(t, filepath.Join(dir, "locked")) + "}",
			[]string{"waitroom: admission.data_dir " + filepath.Join(dir, "locked") + ": in use by another process"}},
		{"admission.data_dir unwritable", "", "admission: {data_dir: " + filepath.Join(file, "admission") + "}",
			[]string{"waitroom: admission.data_dir " + filepath.Join(file, "admission") + ": not a directory"}},
		{"admission redis unreachable", "", "admission: {store: redis, redis: {url: \"" + deadRedis(t) + "\"}}",
			[]string{"waitroom: admission.redis.url 127.0.0.1:", ": connection refused"}},
		{"admission redis loads a torn AOF", "", "admission: {store: redis, redis: {url: \"" +
			redistest.Start(t, redistest.Options{AppendOnly: true, LoadTornAOF: true}).URL() + "\", require_persistence: true}}",
			[]string{"waitroom: admission.redis.url 127.0.0.1:", "aof-load-truncated yes", "redis-check-aof --fix"}},
		{"inventory.data_dir locked", "with_inventory: true",
			"inventory: {listen: 127.0.0.1:0, api_token: 9c1e0b5d2f8a4c6e7f3a, data_dir: " + lockDir(t, filepath.Join(dir, "inv-locked")) + "}",
			[]string{"waitroom: inventory.data_dir " + filepath.Join(dir, "inv-locked") + ": in use by another process"}},
		{"inventory redis unreachable", "with_inventory: true",
			"inventory: {listen: 127.0.0.1:0, api_token: 9c1e0b5d2f8a4c6e7f3a, store: redis, redis: {url: \"" + deadRedis(t) + "\"}}",
			[]string{"waitroom: inventory.redis.url 127.0.0.1:", ": connection refused"}},
		{"secret_file missing", "key:secret_file: " + missing, "",
			[]string{"waitroom: serve.keys.signing.secret_file " + missing + `: key "k1": cannot read it: no such file or directory`}},
		{"secret_file short", "key:secret_file: " + short, "",
			[]string{"waitroom: serve.keys.signing.secret_file " + short + `: key "k1": the HS256 secret is 16 bytes, want at least 32`, "waitroom keygen -secret"}},
		{"secret_file weak", "key:secret_file: " + weak, "",
			[]string{"waitroom: serve.keys.signing.secret_file " + weak + ": ", "repeated", "waitroom keygen -secret"}},
		{"private key missing", "key:algorithm: EdDSA\nkey:private_key_file: " + missing, "",
			[]string{"waitroom: serve.keys.signing.private_key_file " + missing + ": ", "no such file or directory"}},
		{"private key bad PEM", "key:algorithm: EdDSA\nkey:private_key_file: " + badPEM, "",
			[]string{"waitroom: serve.keys.signing.private_key_file " + badPEM + ": ", "not a PKCS#8 private key"}},
		{"private key is a certificate", "key:algorithm: EdDSA\nkey:private_key_file: " + notPEM, "",
			[]string{"waitroom: serve.keys.signing.private_key_file " + notPEM + ": ", "no PEM block"}},
		{"origin CA file missing", "", "origins: [{name: shop, addresses: [\"127.0.0.1:9\"], tls: true, tls_ca_file: " + missing + "}]",
			[]string{"waitroom: origins[0].tls_ca_file " + missing + ": no such file or directory"}},
		{"origin CA file not PEM", "", "origins: [{name: shop, addresses: [\"127.0.0.1:9\"], tls: true, tls_ca_file: " + notPEM + "}]",
			[]string{"waitroom: origins[0].tls_ca_file " + notPEM + ": no PEM certificate found"}},
		{"inline secret short", "key:secret: 0123456789abcdef", "",
			[]string{"serve.keys.signing.secret: must be at least 32 bytes"}},
		{"inline secret weak", "key:secret: " + strings.Repeat("y", 40), "",
			[]string{"serve.keys.signing.secret: is one character repeated", "waitroom keygen -secret"}},
	}
	_ = edPriv
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeIn(t, t.TempDir(), "waitroom.yaml", startConfig(t, t.TempDir(), tt.serveExtra, tt.extra))
			code, stdout, stderr := run(t, "serve", "-c", cfg)
			checkStartFailure(t, code, stdout, stderr, tt.want...)
		})
	}
}

// TestServeStartsWithGoodKeys makes sure the failures above come from the
// broken setting: the same configuration with a good EdDSA key file gets
// past the keys (and stops at a busy address, so that it does not run).
func TestServeStartsWithGoodKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inUse := busyAddr(t)
	cfg := writeIn(t, dir, "waitroom.yaml", startConfig(t, dir, "listen: "+inUse+"\nkey:algorithm: EdDSA\nkey:private_key_file: "+writeEdKey(t, dir), ""))
	code, stdout, stderr := run(t, "serve", "-c", cfg)
	checkStartFailure(t, code, stdout, stderr, "serve.listen "+inUse+": address already in use")
}

func writeEdKey(t *testing.T, dir string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return writeIn(t, dir, "ed.key", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
}

// TestInventoryStartFailures does the same for waitroom inventory.
func TestInventoryStartFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inUse := busyAddr(t)
	locked := lockDir(t, filepath.Join(dir, "locked"))
	file := writeIn(t, dir, "a-file", "x")
	token := []string{"--api-token", "9c1e0b5d2f8a4c6e7f3a"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"--listen in use", []string{"--listen", inUse, "--data-dir", filepath.Join(dir, "a")},
			[]string{"waitroom: --listen " + inUse + ": address already in use"}},
		{"inventory.listen in use", []string{"-c", writeIn(t, dir, "inv.yaml", "inventory: {listen: \""+inUse+"\", data_dir: "+filepath.Join(dir, "b")+"}\n")},
			[]string{"waitroom: inventory.listen " + inUse + ": address already in use"}},
		{"data dir locked", []string{"--listen", "127.0.0.1:0", "--data-dir", locked},
			[]string{"waitroom: inventory.data_dir " + locked + ": in use by another process"}},
		{"data dir unwritable", []string{"--listen", "127.0.0.1:0", "--data-dir", filepath.Join(file, "inv")},
			[]string{"waitroom: inventory.data_dir " + filepath.Join(file, "inv") + ": not a directory"}},
		{"redis unreachable", []string{"--listen", "127.0.0.1:0", "--redis", deadRedis(t)},
			[]string{"waitroom: inventory.redis.url 127.0.0.1:", ": connection refused"}},
		{"weak token", []string{"--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "c"), "--api-token", strings.Repeat("tok", 8)},
			[]string{"inventory.api_token: is a short pattern repeated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"inventory"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--api-token") {
				args = append(args, token...)
			}
			code, stdout, stderr := run(t, args...)
			checkStartFailure(t, code, stdout, stderr, tt.want...)
		})
	}
}

// TestDemoStartFailure: the demo's address in use.
func TestDemoStartFailure(t *testing.T) {
	t.Parallel()
	inUse := busyAddr(t)
	code, stdout, stderr := run(t, "demo", "--listen", inUse, "--crowd", "0")
	checkStartFailure(t, code, stdout, stderr, "waitroom: --listen "+inUse+": address already in use (is another demo running? try --listen 127.0.0.1:0)")
}

// TestCheckConfigReadsKeyFiles: check-config finds a weak secret_file and
// an inline weak secret, as serve would, each on its own line.
func TestCheckConfigReadsKeyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	weak := writeIn(t, dir, "weak-secret", strings.Repeat("ab", 24)+"\n")
	for _, tt := range []struct{ name, serveExtra, line, want string }{
		{"weak secret_file", "key:secret_file: " + weak, "", "serve.keys.signing.secret_file " + weak + `: key "k1": the HS256 secret is a short pattern repeated`},
		{"weak inline", "key:secret: " + strings.Repeat("ab", 24), ":6", "serve.keys.signing.secret: is a short pattern repeated"},
		{"placeholder inline", "key:secret: change-me-to-a-long-random-string-0123", ":6", "serve.keys.signing.secret: looks like a placeholder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeIn(t, t.TempDir(), "waitroom.yaml", startConfig(t, t.TempDir(), tt.serveExtra, ""))
			code, stdout, stderr := run(t, "check-config", "-c", cfg)
			// Validation problems carry the line of their key; the key
			// file's problems (found after validation) the file only.
			checkStartFailure(t, code, stdout, stderr, cfg+tt.line+": "+tt.want, "waitroom keygen -secret")
		})
	}
	good := writeIn(t, dir, "good.yaml", startConfig(t, dir, "", ""))
	if code, stdout, stderr := run(t, "check-config", "-c", good); code != 0 || !strings.HasPrefix(stdout, "configuration is valid\n") {
		t.Errorf("a good file: exit %d, %q %q", code, stdout, stderr)
	}
}
