package signals

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

func newRegistry(t *testing.T) *plugins.Registry[challenge.Signal] {
	t.Helper()
	r := plugins.NewRegistry[challenge.Signal]("signal")
	Register(r)
	return r
}

// fixture reads testdata/<dir>/<type>-<name>.yaml as a section node.
func fixture(t *testing.T, path string) (typ string, node *yaml.Node) {
	t.Helper()
	base := filepath.Base(path)
	typ, _, ok := strings.Cut(base, "-")
	if !ok {
		t.Fatalf("fixture %s is not named <type>-<name>.yaml", base)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Content) != 1 {
		t.Fatalf("%s: want one YAML document", path)
	}
	return typ, doc.Content[0]
}

func TestRegistered(t *testing.T) {
	want := []string{NameClient, NameConsistency, NameHeaders, NameIPRanges, NameJA4, NameKnownBad, NameRate}
	if got := newRegistry(t).Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		if !slices.Contains(plugins.Signals.Names(), n) {
			t.Errorf("%s is not in plugins.Signals", n)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	r := newRegistry(t)
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), `"headers" registered twice`) {
			t.Errorf("second Register: panic %v, want a duplicate-name panic", p)
		}
	}()
	Register(r)
}

func TestValidateGood(t *testing.T) {
	r := newRegistry(t)
	files, _ := filepath.Glob("testdata/good/*.yaml")
	seen := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			typ, node := fixture(t, path)
			seen[typ] = true
			if err := r.Validate(typ, node); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			s, err := r.Build(context.Background(), typ, node, plugins.Env{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if s == nil {
				t.Fatal("Build returned nil")
			}
			req := &challenge.Request{IP: netip.MustParseAddr("192.0.2.1"), JA4: "t13d1516h2_8daaf6152771_e5627efa2ab1", Visitor: "v-1"}
			f, err := s.Check(context.Background(), req)
			if err != nil || !(f.Suspicion >= 0 && f.Suspicion <= 1) {
				t.Errorf("Check = %+v, %v", f, err)
			}
		})
	}
	for _, n := range r.Names() {
		if !seen[n] {
			t.Errorf("no good fixture for %s", n)
		}
	}
}

// Each bad fixture fails with exactly the field errors of its .err file,
// one a line, as "path: message" (a YAML decoding error, which has no
// field path, can take more than one line).
func TestValidateBad(t *testing.T) {
	r := newRegistry(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	seen := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			typ, node := fixture(t, path)
			seen[typ] = true
			want, err := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".err")
			if err != nil {
				t.Fatal(err)
			}
			err = r.Validate(typ, node)
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			var got []string
			for _, fe := range plugins.FieldErrors(err) {
				got = append(got, fe.Error())
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSpace(string(want)); g != w {
				t.Errorf("errors:\n%s\nwant:\n%s", g, w)
			}
			if _, err := r.Build(context.Background(), typ, node, plugins.Env{}); err == nil {
				t.Error("Build accepted it")
			}
		})
	}
	for _, n := range r.Names() {
		if !seen[n] {
			t.Errorf("no bad fixture for %s", n)
		}
	}
}

// Validate never changes the section it checks.
func TestValidateDoesNotMutate(t *testing.T) {
	r := newRegistry(t)
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, path := range files {
		typ, node := fixture(t, path)
		before, _ := yaml.Marshal(node)
		r.Validate(typ, node)
		after, _ := yaml.Marshal(node)
		if string(before) != string(after) {
			t.Errorf("%s: Validate changed the section", path)
		}
	}
}

func build(t *testing.T, typ, section string) challenge.Signal {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(section), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := newRegistry(t).Build(context.Background(), typ, doc.Content[0], plugins.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func check(t *testing.T, s challenge.Signal, r *challenge.Request) challenge.Finding {
	t.Helper()
	f, err := s.Check(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The built signals do what their sections say.
func TestBuiltSignals(t *testing.T) {
	ip := netip.MustParseAddr
	t.Run("headers", func(t *testing.T) {
		s := build(t, NameHeaders, `tool_user_agents: [ShopBot]`)
		r := &challenge.Request{Headers: []challenge.Header{{Name: "Host", Value: "x"}, {Name: "User-Agent", Value: "shopbot/1.0"}}}
		if f := check(t, s, r); f.Reason != challenge.ReasonUATool {
			t.Errorf("extra tool: %+v", f)
		}
	})
	t.Run("ja4", func(t *testing.T) {
		s := build(t, NameJA4, "bad: [{fingerprint: t13i190900_0f2cb44170f4_5c4c70b73fa0, suspicion: 0.5}]\nunknown_suspicion: 0.1")
		if f := check(t, s, &challenge.Request{JA4: "t13i190900_0f2cb44170f4_5c4c70b73fa0"}); f != (challenge.Finding{Suspicion: 0.5, Reason: challenge.ReasonJA4KnownBad}) {
			t.Errorf("bad entry: %+v", f)
		}
		if f := check(t, s, &challenge.Request{JA4: "t13d1715h2_5b57614c22b0_3d5424432f57"}); f.Suspicion != 0.1 {
			t.Errorf("unknown: %+v", f)
		}
		// Chromium's TLS stack is in the shipped data (FoxIO's example is
		// an older Chromium's JA4): a browser, not unknown.
		if f := check(t, s, &challenge.Request{JA4: "t13d1516h2_8daaf6152771_e5627efa2ab1"}); f != (challenge.Finding{}) {
			t.Errorf("chromium: %+v", f)
		}
	})
	t.Run("ip_ranges", func(t *testing.T) {
		s := build(t, NameIPRanges, "files: [{path: testdata/lists/aws-ip-ranges.json}, {path: testdata/lists/hosting.txt}]")
		for _, a := range []string{"52.94.77.1", "2600:1f14::1", "198.51.100.200", "2001:db8:beef::9"} {
			if f := check(t, s, &challenge.Request{IP: ip(a)}); f != (challenge.Finding{Suspicion: 1, Reason: "datacenter_ip"}) {
				t.Errorf("%s: %+v", a, f)
			}
		}
		if f := check(t, s, &challenge.Request{IP: ip("192.0.2.1")}); f != (challenge.Finding{}) {
			t.Errorf("outside: %+v", f)
		}
	})
	t.Run("rate", func(t *testing.T) {
		s := build(t, NameRate, "per_ip: {soft: 1, hard: 3}\nper_prefix: {soft: 0, hard: 0}")
		var f challenge.Finding
		for range 3 {
			f = check(t, s, &challenge.Request{IP: ip("192.0.2.1")})
		}
		if f != (challenge.Finding{Suspicion: 1, Reason: challenge.ReasonRateIP}) {
			t.Errorf("third request at hard 3: %+v", f)
		}
	})
	t.Run("ja4 data", func(t *testing.T) {
		curl := &challenge.Request{JA4: ja4Curl}
		scraper := &challenge.Request{JA4: "t13i190900_0f2cb44170f4_5c4c70b73fa0"}
		if f := check(t, build(t, NameJA4, "{}"), curl); f.Suspicion != 1 {
			t.Errorf("curl with the shipped data: %+v", f)
		}
		s := build(t, NameJA4, "builtin: false\nfile: testdata/lists/fingerprints.json")
		if f := check(t, s, curl); f != (challenge.Finding{}) {
			t.Errorf("curl without the shipped data: %+v", f)
		}
		if f := check(t, s, scraper); f.Suspicion != 1 {
			t.Errorf("the operator's tool: %+v", f)
		}
	})
	t.Run("consistency", func(t *testing.T) {
		hs := []challenge.Header{{Name: "Host", Value: "x"}, {Name: "User-Agent", Value: uaChrome}}
		if f := check(t, build(t, NameConsistency, "{}"), &challenge.Request{Headers: hs, JA4: ja4Curl}); f.Reason != challenge.ReasonTLSTool {
			t.Errorf("curl claiming Chrome: %+v", f)
		}
		// The operator's file says Firefox; a Chrome claim over it is a lie.
		s := build(t, NameConsistency, "file: testdata/lists/fingerprints.json")
		if f := check(t, s, &challenge.Request{Headers: hs, JA4: "t13d1715h2_5b57614c22b0_3d5424432f57"}); f.Reason != challenge.ReasonTLSOtherBrowser {
			t.Errorf("Firefox's TLS claiming Chrome: %+v", f)
		}
	})
	t.Run("client", func(t *testing.T) {
		yes := true
		s := build(t, NameClient, "{}")
		if f := check(t, s, &challenge.Request{Client: &challenge.ClientReport{Webdriver: &yes}}); f.Reason != challenge.ReasonClientWebdriver {
			t.Errorf("webdriver: %+v", f)
		}
	})
	t.Run("known_bad", func(t *testing.T) {
		s := build(t, NameKnownBad, "files: [{path: testdata/lists/bad-ips.txt, kind: ip}, {path: testdata/lists/bad-visitors.txt, kind: visitor}]")
		for _, r := range []*challenge.Request{{IP: ip("203.0.113.9")}, {IP: ip("2001:db8::bad")}, {Visitor: "v-0001"}, {Visitor: "v-0002"}} {
			if f := check(t, s, r); f.Suspicion != 1 {
				t.Errorf("%+v: %+v", r, f)
			}
		}
		if f := check(t, s, &challenge.Request{Visitor: "#v-0003", IP: ip("203.0.113.10")}); f != (challenge.Finding{}) {
			t.Errorf("comment line or unlisted address: %+v", f)
		}
	})
}

// Defaults are named constants and are what an empty section gives.
func TestDefaults(t *testing.T) {
	c := DefaultRateConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("default rate config: %v", err)
	}
	if c.PerIP.Soft != DefaultRatePerIPSoft || c.PerPrefix.Hard != DefaultRatePerPrefixHard || c.Window != DefaultRateWindow || c.MaxKeys != DefaultRateMaxKeys {
		t.Errorf("DefaultRateConfig() = %+v", c)
	}
	if err := DefaultHeadersConfig().Validate(); err != nil {
		t.Errorf("default headers config: %v", err)
	}
	if err := DefaultJA4Config().Validate(); err != nil {
		t.Errorf("default ja4 config: %v", err)
	}
	if DefaultKnownBadConfig().FalsePositiveRate != challenge.DefaultKnownBadFalsePositiveRate {
		t.Error("known_bad default false positive rate")
	}
	// A left-out section (nil node) is an empty mapping.
	r := newRegistry(t)
	for _, n := range []string{NameHeaders, NameJA4, NameRate, NameConsistency, NameClient} {
		if _, err := r.Build(context.Background(), n, nil, plugins.Env{}); err != nil {
			t.Errorf("%s without a section: %v", n, err)
		}
	}
}

// A factory called directly, with a zero Env, still works (the registry
// fills Env.Log; a direct caller may not).
func TestBuildZeroEnv(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("files: [{path: testdata/lists/hosting.txt}]"), &doc); err != nil {
		t.Fatal(err)
	}
	f := configured(DefaultIPRangesConfig, buildIPRanges)
	if _, err := f.Build(context.Background(), doc.Content[0], plugins.Env{}); err != nil {
		t.Fatal(err)
	}
}

const (
	ja4Curl  = "t13d3112h2_e8f1e7e78f70_b26ce05bbdd6"
	uaChrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
)

// The shipped rate defaults, weighed 40 as in the default signal set
// and configs/single-node.yaml, against the heavy band (30): a household
// of a few fans stays light; 50 places a minute from one address, or one
// from each of 50 addresses of a /24 or a /48, get the heavy work from
// the 10th (address) or 20th (network) on.
func TestRateDefaultsScore(t *testing.T) {
	const weight, heavy = 40, 30
	points := func(f challenge.Finding) int { return int(f.Suspicion*weight + 0.5) }
	fetch := func(s challenge.Signal, ip netip.Addr) int {
		return points(check(t, s, &challenge.Request{IP: ip}))
	}
	t.Run("household", func(t *testing.T) {
		s := build(t, NameRate, "{}")
		for i := range 9 { // a few fans, each with a retry or two
			if p := fetch(s, netip.MustParseAddr("192.0.2.1")); p >= heavy {
				t.Fatalf("fetch %d from one address: %d points", i+1, p)
			}
		}
	})
	for _, tc := range []struct {
		name       string
		addr       func(i int) netip.Addr
		firstHeavy int
	}{
		{"50 from one address", func(int) netip.Addr { return netip.MustParseAddr("192.0.2.1") }, 10},
		{"one from each of 50 addresses of a /24", func(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}) }, 20},
		{"one from each of 50 /64s of a /48", func(i int) netip.Addr {
			return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, byte(i), 15: 1})
		}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(t, NameRate, "{}")
			for i := 1; i <= 50; i++ {
				if p := fetch(s, tc.addr(i)); (p >= heavy) != (i >= tc.firstHeavy) {
					t.Fatalf("place %d: %d points; want the heavy work (%d) from place %d on", i, p, heavy, tc.firstHeavy)
				}
			}
		})
	}
}
