package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// withDefence turns the demo's bot defence on, with the default bands and
// work, a datacenter list holding 203.0.113.0/24 (documentation
// addresses) and 127.0.0.1 trusted to say who the client is.
func withDefence(t *testing.T) func(*config.Config) {
	list := filepath.Join(t.TempDir(), "datacenter.txt")
	if err := os.WriteFile(list, []byte("# test hosting range\n203.0.113.0/24\n2001:db8::/32\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(c *config.Config) {
		c.Serve.TrustedProxies = []string{"127.0.0.1/32"}
		c.BotDefence.Secret = randomHex(32)
		var rangesCfg config.Signal
		if err := yamlNode(&rangesCfg.Config, "files: [{path: "+list+", format: cidr}]"); err != nil {
			t.Fatal(err)
		}
		rangesCfg.Type, rangesCfg.Weight = "ip_ranges", 60
		c.BotDefence.Signals = append(config.DefaultSignals(), rangesCfg)
		c.Events[0].Challenge.Mode = config.ChallengeOn
	}
}

// TestProofOfWorkInChromium: a person's Chromium solves the light proof
// of work in the page, joins, is admitted and reaches the shop.
func TestProofOfWorkInChromium(t *testing.T) {
	b := browsertest.Start(t, browsertest.AsPerson...)
	tab := b.NewTab(t, browsertest.AsDesktopChrome())
	d := startDemo(t, 0, 8*time.Second, withDefence(t))

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, tab, "the countdown after the join", `!document.getElementById("wr-countdown").hidden`)
	browsertest.Screenshot(t, tab, "1-joined-after-pow")
	browsertest.WaitFor(t, tab, "the shop after admission",
		`location.pathname === "/events/demo-concert" && document.title.includes("Choose your tickets")`)
	m := metrics(t, d)
	for _, want := range []string{
		`waitroom_challenge_decisions_total{action="light_pow",applied="light_pow",event="demo-concert"} 1`,
		`waitroom_joins_total{event="demo-concert",result="joined"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestBotsScoreHigh: scripted clients and a headless browser with its
// default profile land in the heavy, captcha or block bands, while the
// person's Chromium gets the light work. The scripts come from addresses
// of their own (the proxy remembers a suspect address's score): the
// person's browser and the headless one share 127.0.0.1, so the person
// asks first.
func TestBotsScoreHigh(t *testing.T) {
	b := browsertest.Start(t)
	d := startDemo(t, 0, time.Hour, withDefence(t))
	url := d.URL + "_wr/api/challenge?event=demo-concert"

	type answer struct {
		Action string `json:"action"`
		Error  string `json:"error"`
		PoW    *struct {
			Bits int `json:"bits"`
		} `json:"pow"`
	}
	band := func(status int, a answer) string {
		switch {
		case status == 403 && a.Error == "blocked":
			return "block"
		case status != 200:
			return "error"
		case a.Action == "captcha":
			return "captcha"
		case a.Action == "pow" && a.PoW != nil && a.PoW.Bits == config.DefaultHeavyBits:
			return "heavy"
		case a.Action == "pow" && a.PoW != nil && a.PoW.Bits == config.DefaultLightBits:
			return "light"
		}
		return "unknown"
	}
	script := func(headers ...string) string {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header = http.Header{}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		if req.Header.Get("User-Agent") == "" {
			req.Header.Set("User-Agent", "") // Go would send its own
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var a answer
		json.Unmarshal(body, &a)
		return band(resp.StatusCode, a)
	}
	inPage := func(tab browsertestTab) string {
		browsertest.Navigate(t, tab, d.URL+"events/demo-concert") // the room page: its CSP lets it fetch the API
		browsertest.Eval[bool](t, tab, `(window.wrAnswer = "", fetch("/_wr/api/challenge?event=demo-concert", {headers: {Accept: "application/json"}})
			.then(r => r.json().then(j => { window.wrAnswer = JSON.stringify({s: r.status, a: j}) })), true)`)
		browsertest.WaitFor(t, tab, "the challenge answer", `window.wrAnswer !== ""`)
		var out struct {
			S int    `json:"s"`
			A answer `json:"a"`
		}
		if err := json.Unmarshal([]byte(browsertest.Eval[string](t, tab, `window.wrAnswer`)), &out); err != nil {
			t.Fatal(err)
		}
		return band(out.S, out.A)
	}

	if got := inPage(b.NewTab(t, browsertest.AsDesktopChrome())); got != "light" {
		t.Errorf("a person's Chromium got the %s band, want light", got)
	}
	high := map[string]bool{"heavy": true, "captcha": true, "block": true}
	for name, got := range map[string]string{
		"curl": script("User-Agent", "curl/8.5.0", "Accept", "*/*", "X-Forwarded-For", "198.51.100.1"),
		"python-requests": script("User-Agent", "python-requests/2.32.3", "Accept-Encoding", "gzip, deflate", "Accept", "*/*",
			"Connection", "keep-alive", "X-Forwarded-For", "198.51.100.2"),
		"datacenter IP": script("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Accept", "application/json", "Accept-Language", "en-US,en;q=0.9", "X-Forwarded-For", "203.0.113.7"),
		"headless Chromium, default profile": inPage(b.NewTab(t)),
	} {
		if !high[got] {
			t.Errorf("%s got the %s band, want heavy, captcha or block", name, got)
		} else {
			t.Logf("%s: %s", name, got)
		}
	}
}

// metrics returns the demo's /metrics text.
func metrics(t *testing.T, d *Demo) string {
	t.Helper()
	req, _ := http.NewRequest("GET", d.AdminURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+d.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

type browsertestTab = context.Context

// yamlNode parses src into n.
func yamlNode(n *yaml.Node, src string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return err
	}
	*n = *doc.Content[0]
	return nil
}
