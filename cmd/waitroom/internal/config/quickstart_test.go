package config

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"
)

// quickstartEnv returns a lookup with random quickstart secrets.
func quickstartEnv() func(string) (string, bool) {
	secret := func() string {
		b := make([]byte, 32)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	return lookupIn(map[string]string{EnvSigningSecret: secret(), EnvAdminToken: secret(), EnvChallengeSecret: secret()})
}

// parseQuickstart renders q and loads it as serve would.
func parseQuickstart(t *testing.T, q Quickstart, env func(string) (string, bool)) *Config {
	t.Helper()
	text, err := q.YAML("waitroom init --origin " + q.Origin)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(text, env)
	if err != nil {
		t.Fatalf("the quickstart text does not parse: %v\n%s", err, text)
	}
	if err := ValidateFor(c, RoleProxy); err != nil {
		t.Fatalf("the quickstart text is not valid: %v\n%s", err, text)
	}
	if err := Validate(c); err != nil {
		t.Fatalf("check-config refuses the quickstart text: %v\n%s", err, text)
	}
	return c
}

func TestQuickstartConfig(t *testing.T) {
	c := parseQuickstart(t, Quickstart{Origin: "http://127.0.0.1:3000", Gates: []string{"/checkout/", "/events/"},
		DataDir: "/var/lib/wr $x/", Listen: ":8080", AdminListen: "[::1]:9191", Name: `Bob's "Shop" $5`}, quickstartEnv())
	eq(t, c.Serve.Listen, ":8080")
	eq(t, c.Admin.Listen, "[::1]:9191")
	eq(t, c.Admission.Store, StoreEmbedded)
	eq(t, c.Admission.DataDir, "/var/lib/wr $x/admission")
	eq(t, len(c.Origins), 1)
	deq(t, c.Origins[0].Addresses, []string{"127.0.0.1:3000"})
	eq(t, c.Origins[0].TLS, false)
	eq(t, c.Origins[0].HealthCheck, DefaultOrigin().HealthCheck) // a TCP connect
	deq(t, c.Routes, []Route{{Prefix: "/checkout/", Event: QuickstartEvent}, {Prefix: "/events/", Event: QuickstartEvent}})
	eq(t, c.Unmatched.EffectiveAction(), ActionPass)
	eq(t, len(c.Events), 1)
	e := c.Events[0]
	eq(t, e.Mode, ModeThreshold)
	eq(t, e.Name, `Bob's "Shop" $5`)
	eq(t, e.LandingPath, "/checkout/")
	eq(t, e.Caps.MaxActive, QuickstartMaxActive)
	eq(t, e.Challenge.Mode, ChallengeOn)
	if c.Serve.WithInventory || c.Roles()&RoleSidecar != 0 {
		t.Error("the quickstart runs no sidecar")
	}

	// https: port 443 and TLS by default; defaults for listen and admin.
	c = parseQuickstart(t, Quickstart{Origin: "https://shop.example.com/", Gates: []string{"/buy"}}, quickstartEnv())
	deq(t, c.Origins[0].Addresses, []string{"shop.example.com:443"})
	eq(t, c.Origins[0].TLS, true)
	eq(t, c.Serve.Listen, DefaultServeListen)
	eq(t, c.Admin.Listen, DefaultAdminListen)
	eq(t, c.Admission.DataDir, DefaultQuickstartDataDir+"/admission")
	c = parseQuickstart(t, Quickstart{Origin: "http://[::1]", Gates: []string{"/"}}, quickstartEnv())
	deq(t, c.Origins[0].Addresses, []string{"[::1]:80"})
}

// TestQuickstartSecretsFromEnvironment: the text holds no secret; without
// the variables it does not load, and says which to set.
func TestQuickstartSecretsFromEnvironment(t *testing.T) {
	q := Quickstart{Origin: "http://127.0.0.1:3000", Gates: []string{"/checkout/"}}
	text, err := q.YAML("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"${" + EnvSigningSecret + "}", "${" + EnvAdminToken + "}", "mode: threshold"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the text lacks %s:\n%s", want, text)
		}
	}
	_, err = Parse(text, nil)
	msg := errString(err)
	for _, v := range []string{EnvSigningSecret, EnvAdminToken} {
		if !strings.Contains(msg, v+" is not set") {
			t.Errorf("without %s: %v", v, err)
		}
	}
}

// TestQuickstartMinimalExample: configs/minimal.yaml is the quickstart
// configuration of its own comment's command line, key for key.
func TestQuickstartMinimalExample(t *testing.T) {
	data, err := os.ReadFile("../../../../configs/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 30 {
		t.Errorf("configs/minimal.yaml has %d lines; the README promises at most 30", n)
	}
	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml check-config file=minimal.yaml\n"+string(data)+"```") {
		t.Error("README.md does not show configs/minimal.yaml as it is")
	}
	env := quickstartEnv()
	min, err := Parse(data, env)
	if err != nil {
		t.Fatal(err)
	}
	qs := parseQuickstart(t, Quickstart{Origin: "http://127.0.0.1:3000", Gates: []string{"/checkout/", "/events/"}}, env)
	if !reflect.DeepEqual(min, qs) {
		t.Errorf("configs/minimal.yaml and the quickstart differ:\n%+v\n%+v", min, qs)
	}
}

func TestQuickstartCheck(t *testing.T) {
	ok := Quickstart{Origin: "http://127.0.0.1:3000", Gates: []string{"/checkout/"}}
	for _, tt := range []struct {
		name   string
		change func(q *Quickstart)
		want   []string
	}{
		{"valid", func(*Quickstart) {}, nil},
		{"no origin, no gate", func(q *Quickstart) { q.Origin, q.Gates = "", nil }, []string{
			"--origin: is required: the URL of your site, such as http://127.0.0.1:3000",
			"--gate: give at least one path prefix to put behind the waiting room, such as --gate /checkout/"}},
		{"bare host", func(q *Quickstart) { q.Origin = "127.0.0.1:3000" }, []string{
			`--origin: "127.0.0.1:3000" must start with http:// or https://`}},
		{"ftp", func(q *Quickstart) { q.Origin = "ftp://h:21" }, []string{`--origin: "ftp://h:21" must start with http:// or https://`}},
		{"path", func(q *Quickstart) { q.Origin = "http://h:1/shop" }, []string{
			`--origin: "http://h:1/shop" has a path, query or fragment; give only scheme, host and port (waitroom forwards every path as it is)`}},
		{"query", func(q *Quickstart) { q.Origin = "http://h:1?a" }, []string{
			`--origin: "http://h:1?a" has a path, query or fragment; give only scheme, host and port (waitroom forwards every path as it is)`}},
		{"credentials", func(q *Quickstart) { q.Origin = "http://u:p@h:1" }, []string{
			`--origin: "http://u:p@h:1" carries a user name or password; an origin URL has none`}},
		{"port", func(q *Quickstart) { q.Origin = "http://h:99999" }, []string{`--origin: "http://h:99999" has no valid port (1 to 65535)`}},
		{"empty port", func(q *Quickstart) { q.Origin = "http://h:" }, []string{`--origin: "http://h:" has an empty port`}},
		{"host", func(q *Quickstart) { q.Origin = "http://a_b:1" }, []string{`--origin: "http://a_b:1" has no valid host name or IP address`}},
		{"gates", func(q *Quickstart) {
			q.Gates = []string{"checkout", "//evil/", "/a b", "/x/../y", "/_wr/api", "/Checkout/", "/checkout/"}
		}, []string{
			`--gate: "checkout" must be a path starting with a single /, such as /checkout/`,
			`--gate: "//evil/" must be a path starting with a single /, such as /checkout/`,
			`--gate: "/a b" has ' ': use a plain path such as /checkout/ (letters, digits, / and -._~)`,
			`--gate: "/x/../y" has a . or .. segment`,
			`--gate: "/_wr/api" is inside /_wr, which waitroom keeps for its own pages`,
			`--gate: "/checkout/" is given twice`}},
		{"listen", func(q *Quickstart) { q.Listen, q.AdminListen = "8080", "0.0.0.0:9090" }, []string{
			`--listen: "8080" is not host:port, such as 127.0.0.1:8080 or :8080`,
			`--admin: "0.0.0.0:9090" is not a loopback address: the operator API stays on this machine (127.0.0.1:PORT or [::1]:PORT)`}},
		{"admin on every interface", func(q *Quickstart) { q.AdminListen = ":9090" }, []string{`--admin: ":9090" has no valid host`}},
		{"name", func(q *Quickstart) { q.Name = "a\nb" }, []string{"--name: must be one line of at most 200 bytes"}},
		{"origin is waitroom", func(q *Quickstart) { q.Origin = "http://localhost:8080" }, []string{
			"--origin: localhost:8080 is where waitroom itself listens (--listen 127.0.0.1:8080): run the site on another port, or give waitroom another --listen"}},
		{"origin is waitroom on every interface", func(q *Quickstart) { q.Origin, q.Listen = "http://10.0.0.5:80", ":80" }, []string{
			"--origin: 10.0.0.5:80 is where waitroom itself listens (--listen :80): run the site on another port, or give waitroom another --listen"}},
		{"same port, another host", func(q *Quickstart) { q.Origin, q.Listen = "http://10.0.0.5:8080", "127.0.0.1:8080" }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := ok
			q.Gates = append([]string(nil), ok.Gates...)
			tt.change(&q)
			var got []string
			for _, p := range Problems(q.Check()) {
				got = append(got, p.Error())
			}
			deq(t, got, tt.want)
			if _, err := q.YAML("x"); (err != nil) != (tt.want != nil) {
				t.Errorf("YAML: %v", err)
			}
		})
	}
}

func deq(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
