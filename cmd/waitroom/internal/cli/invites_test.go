package cli

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

// inviteConfig writes a serve configuration with event "show", whose lane
// "presale" takes invite codes signed with the returned secret, and lane
// "fans" takes account proofs only.
func inviteConfig(t *testing.T) (path string, secret []byte) {
	t.Helper()
	dir := t.TempDir()
	b := make([]byte, 32)
	rand.Read(b)
	secret = []byte(hex.EncodeToString(b))
	acct := make([]byte, 32)
	rand.Read(acct)
	events := `events:
  - id: show
    queue_opens_at: 2027-03-01T09:00:00Z
    on_sale_at: 2027-03-01T10:00:00Z
    landing_path: /tour/
    lanes:
      - {name: presale, priority: true, invite_secret: ` + string(secret) + `}
      - {name: fans, account_secret: ` + hex.EncodeToString(acct) + `}`
	path = writeIn(t, dir, "waitroom.yaml", startConfig(t, dir, "", events))
	if code, out, errOut := run(t, "check-config", "-c", path); code != 0 {
		t.Fatalf("the test configuration is not valid: %s %s", out, errOut)
	}
	return path, secret
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, s)
	}
	return rows
}

// TestInvitesMint: the CSV has its header and one row per code; every
// code verifies for its lane (and only for it), ids are unique, and the
// link path fills in the page's field.
func TestInvitesMint(t *testing.T) {
	t.Parallel()
	cfg, secret := inviteConfig(t)
	code, out, errOut := run(t, "invites", "mint", "-c", cfg, "--event", "show", "--lane", "presale", "-n", "300", "--batch", "fanclub-1")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := readCSV(t, out)
	if len(rows) != 301 || strings.Join(rows[0], ",") != "code,event,lane,id,batch,link_path" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	ids := map[string]bool{}
	for _, r := range rows[1:] {
		c, ev, lane, id, batch, link := r[0], r[1], r[2], r[3], r[4], r[5]
		got, account, err := admission.ParseInvite(secret, "show", c)
		if err != nil || got != id || account != "" || ev != "show" || lane != "presale" || batch != "fanclub-1" {
			t.Fatalf("row %v: ParseInvite = %q, %q, %v", r, got, account, err)
		}
		if link != "/tour/#invite="+c {
			t.Errorf("link_path %q", link)
		}
		if _, _, err := admission.ParseInvite(secret, "other", c); err == nil {
			t.Fatalf("code %s verifies for another event", c)
		}
		if ids[id] {
			t.Fatalf("id %s twice", id)
		}
		ids[id] = true
	}
	// check reads codes as visitors type them.
	c := rows[1][0]
	code, out, _ = run(t, "invites", "check", "-c", cfg, "--event", "show", strings.ToLower(strings.ReplaceAll(c, "-", " ")))
	if code != 0 || !strings.Contains(out, "valid for lane presale of event show (id "+rows[1][3]+")") {
		t.Errorf("check of a good code: exit %d: %s", code, out)
	}
	code, out, _ = run(t, "invites", "check", "-c", cfg, "--event", "show", c, "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA")
	if code != 1 || !strings.Contains(out, `"AAAA-AAAA-AAAA-AAAA-AAAA-AAAA": not valid for event show`) {
		t.Errorf("check of a bad code: exit %d: %s", code, out)
	}
}

// TestInvitesMintFile: -o creates a file only its owner reads, never
// replaces one without --force, and replaces it with --force.
func TestInvitesMintFile(t *testing.T) {
	t.Parallel()
	cfg, _ := inviteConfig(t)
	out := filepath.Join(t.TempDir(), "codes.csv")
	mint := func(extra ...string) (int, string, string) {
		return run(t, append([]string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "presale", "-n", "5", "-o", out}, extra...)...)
	}
	if code, stdout, stderr := mint(); code != 0 || !strings.Contains(stdout, "minted 5 invite codes for lane presale of event show") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	first, _ := os.ReadFile(out)
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", st.Mode(), err)
	}
	if code, _, stderr := mint(); code != 1 || !strings.Contains(stderr, "exists; it is not replaced without --force") {
		t.Fatalf("second mint into the same file: exit %d: %s", code, stderr)
	}
	if again, _ := os.ReadFile(out); string(again) != string(first) {
		t.Fatal("the refused mint changed the file")
	}
	if code, _, stderr := mint("--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	replaced, _ := os.ReadFile(out)
	if string(replaced) == string(first) || len(readCSV(t, string(replaced))) != 6 {
		t.Fatalf("--force did not write new codes:\n%s", replaced)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".codes.csv.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestInvitesUsage(t *testing.T) {
	t.Parallel()
	cfg, _ := inviteConfig(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"invites"}, 2, "Usage: waitroom invites mint"},
		{"unknown subcommand", []string{"invites", "make"}, 2, `unknown subcommand "make"`},
		{"no lane", []string{"invites", "mint", "-c", cfg, "--event", "show", "-n", "1"}, 2, "missing --lane"},
		{"no count", []string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "presale"}, 2, "-n must be from 1 to"},
		{"too many", []string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "presale", "-n", "1000001"}, 2, "-n must be from 1 to"},
		{"force without a file", []string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "presale", "-n", "1", "--force"}, 2, "--force replaces -o FILE"},
		{"unknown event", []string{"invites", "mint", "-c", cfg, "--event", "nope", "--lane", "presale", "-n", "1"}, 1, `has no event "nope"`},
		{"unknown lane", []string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "vip", "-n", "1"}, 1, `event "show" has no lane "vip" (its lanes: presale, fans)`},
		{"lane without codes", []string{"invites", "mint", "-c", cfg, "--event", "show", "--lane", "fans", "-n", "1"}, 1, "has no invite_secret"},
		{"check without codes", []string{"invites", "check", "-c", cfg, "--event", "show"}, 2, "give the codes to check"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d and %q", c.name, code, stderr, c.code, c.want)
		}
	}
	if code, stdout, _ := run(t, "invites", "-h"); code != 0 || !strings.HasPrefix(stdout, "Usage: waitroom invites") {
		t.Errorf("invites -h: exit %d: %s", code, stdout)
	}
}
