package challenge

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

var update = flag.Bool("update", false, "rewrite fingerprints.json from the tools on this machine")

// liveClient is one client as the fingerprint test records it.
type liveClient struct {
	fp      Fingerprint
	headers []Header // the request it sent
}

// fingerprintTools are the clients TestFingerprintData runs: each fetches
// url (an https://localhost URL with a self-signed certificate) the way
// a script using it would, certificate checks off. The second result is
// the client's version; a missing program skips the client.
var fingerprintTools = []struct {
	client string
	kind   string
	family string
	run    func(t *testing.T, url, dir string) (version string)
}{
	{"curl", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		need(t, "curl")
		run(t, "curl", "-sk", "-o", "/dev/null", url)
		return firstLine(output(t, "curl", "--version"))
	}},
	{"python-urllib", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		need(t, "python3")
		// http.client makes the context (and sets ALPN) itself, as for any
		// script that calls urlopen(url); only the checks are turned off.
		run(t, "python3", "-c", `import ssl, sys, urllib.request
ssl._create_default_https_context = ssl._create_unverified_context
urllib.request.urlopen(sys.argv[1]).read()`, url)
		return pythonVersion(t)
	}},
	{"python-requests", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		need(t, "python3")
		if exec.Command("python3", "-c", "import requests").Run() != nil {
			t.Skip("python3 has no requests module")
		}
		run(t, "python3", "-c", `import sys, warnings, requests
warnings.simplefilter("ignore")
requests.get(sys.argv[1], verify=False)`, url)
		return pythonVersion(t) + " requests " + strings.TrimSpace(output(t, "python3", "-c", "import requests; print(requests.__version__)"))
	}},
	{"node-https", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		need(t, "node")
		run(t, "node", "-e", `require("https").get(process.argv[1], {rejectUnauthorized: false}, r => r.on("end", () => process.exit(0)).resume())`, url)
		return nodeVersion(t)
	}},
	{"node-fetch", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		need(t, "node")
		cmd := exec.Command("node", "-e", `fetch(process.argv[1]).then(r => r.text()).then(() => process.exit(0))`, url)
		cmd.Env = append(os.Environ(), "NODE_TLS_REJECT_UNAUTHORIZED=0", "NODE_NO_WARNINGS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("node fetch: %v\n%s", err, out)
		}
		return nodeVersion(t)
	}},
	{"java", FingerprintTool, "", func(t *testing.T, url, dir string) string {
		need(t, "java")
		src := filepath.Join(dir, "Fetch.java")
		if err := os.WriteFile(src, []byte(javaFetch), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "java", src, url)
		return firstLine(output(t, "java", "-version"))
	}},
	{"go", FingerprintTool, "", func(t *testing.T, url, _ string) string {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		defer tr.CloseIdleConnections()
		res, err := (&http.Client{Transport: tr}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return "go " + runtime.Version() + " net/http"
	}},
}

// javaFetch is a Java client as a script would write it: the JDK's
// HttpClient. It trusts any certificate, and names the server (SNI)
// itself, since the JDK sends no SNI for a host name without a dot and
// real sites have dots.
const javaFetch = `import java.net.URI;
import java.net.http.*;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.*;

public class Fetch {
  public static void main(String[] args) throws Exception {
    TrustManager[] all = { new X509TrustManager() {
      public void checkClientTrusted(X509Certificate[] c, String a) {}
      public void checkServerTrusted(X509Certificate[] c, String a) {}
      public X509Certificate[] getAcceptedIssuers() { return new X509Certificate[0]; }
    } };
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, all, null);
    SSLParameters p = ctx.getDefaultSSLParameters();
    p.setServerNames(List.of(new SNIHostName("localhost")));
    HttpClient c = HttpClient.newBuilder().sslContext(ctx).sslParameters(p).build();
    c.send(HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.discarding());
  }
}
`

func need(t *testing.T, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s is not installed on this machine", program)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return string(out)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

func pythonVersion(t *testing.T) string {
	return strings.TrimSpace(output(t, "python3", "-c", "import ssl, platform; print('python', platform.python_version(), ssl.OPENSSL_VERSION)"))
}

func nodeVersion(t *testing.T) string {
	return strings.TrimSpace(output(t, "node", "-e", `console.log("node " + process.version + " OpenSSL " + process.versions.openssl)`))
}

// recordTools runs every tool present against srv and returns what the
// server saw, skipping (as subtests) the tools that are missing.
func recordTools(t *testing.T, srv *browserServer) []liveClient {
	var live []liveClient
	url := fmt.Sprintf("https://localhost:%d/join", srv.port())
	for _, tool := range fingerprintTools {
		t.Run(tool.client, func(t *testing.T) {
			version := tool.run(t, url, t.TempDir())
			j := awaitJoin(t, srv, tool.client)
			fp := Fingerprint{Client: tool.client, Kind: tool.kind, Family: tool.family, JA4: j.ja4,
				Headers: HeaderFingerprint(j.headers), Version: version}
			t.Logf("%s: %s headers %s (%s)", tool.client, fp.JA4, fp.Headers, version)
			live = append(live, liveClient{fp, j.headers})
		})
	}
	return live
}

func awaitJoin(t *testing.T, srv *browserServer, client string) browserJoin {
	t.Helper()
	select {
	case j := <-srv.joins:
		return j
	case <-time.After(browsertest.DefaultTimeout):
		t.Fatalf("no request from %s", client)
		return browserJoin{}
	}
}

// recordChromium loads the join page in the Chromium the tests drive,
// once as it comes (headless) and once looking like desktop Chrome, and
// returns both joins.
func recordChromium(t *testing.T, srv *browserServer) (headless, desktop liveClient, ok bool) {
	t.Run("chromium", func(t *testing.T) {
		if err := browsertest.Check(); err != nil {
			t.Skip(err)
		}
		b := browsertest.Start(t)
		var version string
		for i, opts := range [][]browsertest.TabOption{nil, {browsertest.AsDesktopChrome()}} {
			tab := b.NewTab(t, opts...)
			cctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
			if _, err := chromedp.Call(cctx, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true}); err != nil {
				t.Fatalf("ignoring the test certificate: %v", err)
			}
			v, err := chromedp.Call(cctx, browser.GetVersion, cdp.Empty{})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				version = "chromium " + strings.TrimPrefix(v.Product, "HeadlessChrome/")
			}
			browsertest.Navigate(t, tab, fmt.Sprintf("https://localhost:%d/", srv.port()))
			j := awaitJoin(t, srv, "chromium")
			c := liveClient{Fingerprint{Client: "chromium", Kind: FingerprintBrowser, Family: FamilyChromium,
				JA4: j.ja4, Version: version}, j.headers}
			t.Logf("chromium (tab %d): %s", i, j.ja4)
			if i == 0 {
				headless = c
			} else {
				desktop = c
			}
		}
		ok = true
	})
	return headless, desktop, ok
}

// TestFingerprintData runs the HTTP tools present on this machine and the
// Chromium the tests drive against a TLS listener that computes JA4 from
// each ClientHello, and checks that fingerprints.json lists each tool's
// JA4 as a tool and Chromium's as a browser, and that the signals that
// read the file find nothing wrong with Chromium, headless or looking
// like desktop Chrome, while a tool that claims to be Chrome is caught.
// With -update it adds what it saw to the file instead (entries seen
// before are kept: old versions of the tools are still out there).
func TestFingerprintData(t *testing.T) {
	srv := newBrowserServer(t)
	live := recordTools(t, srv)
	headless, desktop, haveChromium := recordChromium(t, srv)
	if haveChromium {
		live = append(live, headless)
	}
	if t.Failed() {
		return
	}
	if *update {
		writeFingerprints(t, live)
		return
	}
	data := DefaultFingerprints()
	for _, c := range live {
		i := slices.IndexFunc(data, func(f Fingerprint) bool { return f.Client == c.fp.Client && f.JA4 == c.fp.JA4 })
		if i < 0 {
			t.Errorf("%s (%s): JA4 %s is not in fingerprints.json: run go test ./challenge -run TestFingerprintData -update", c.fp.Client, c.fp.Version, c.fp.JA4)
			continue
		}
		if f := data[i]; f.Kind != c.fp.Kind || f.Family != c.fp.Family {
			t.Errorf("%s: listed as %s/%s, want %s/%s", c.fp.Client, f.Kind, f.Family, c.fp.Kind, c.fp.Family)
		}
		if f := data[i]; f.Kind == FingerprintTool && f.Headers != "" && f.Headers != c.fp.Headers {
			t.Errorf("%s: header fingerprint %s, listed %s: run -update", c.fp.Client, c.fp.Headers, f.Headers)
		}
	}

	ja4, err := NewJA4Signal(JA4Options{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := NewConsistencySignal(ConsistencyOptions{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if haveChromium {
		for _, c := range []liveClient{headless, desktop} {
			r := &Request{Headers: c.headers, JA4: c.fp.JA4}
			for name, s := range map[string]Signal{"ja4": ja4, "consistency": cons} {
				if f, _ := s.Check(ctx, r); f.Suspicion != 0 {
					t.Errorf("chromium %s: %s signal %+v, want nothing", userAgent(c.headers), name, f)
				}
			}
		}
	}
	// The default signal set's scores: every tool lands in the CAPTCHA
	// band (60) or above, with its own headers or Chrome's; Chromium with
	// its headless User-Agent too; with a desktop one, only its page's
	// webdriver report tells at the join (heavy work, 30); a person's
	// Chromium scores 0.
	if haveChromium {
		scores := defaultSetScores(t, data, live, headless, desktop, desktop.headers)
		for name, sc := range scores {
			var want [2]int
			switch name {
			case "chromium as a person":
				want = [2]int{0, 0}
			case "chromium headless, desktop UA":
				want = [2]int{0, 30}
			default:
				if sc[0] < 60 || sc[1] < 60 {
					t.Errorf("%s: scores %v, want the CAPTCHA band (60) or above", name, sc)
				}
				continue
			}
			if sc != want {
				t.Errorf("%s: scores %v, want %v", name, sc, want)
			}
		}
	}

	// A client resuming its TLS session on a new connection sends another
	// extension list, so another JA4: Node's https agent does so. The
	// signals still know it by its TLS stack.
	t.Run("resumed session", func(t *testing.T) {
		need(t, "node")
		run(t, "node", "-e", `const https = require("https");
const agent = new https.Agent({keepAlive: false});
const get = () => new Promise(ok => https.get(process.argv[1], {agent, rejectUnauthorized: false}, r => r.on("end", ok).resume()));
get().then(get).then(() => process.exit(0));`, fmt.Sprintf("https://localhost:%d/join", srv.port()))
		first, second := awaitJoin(t, srv, "node"), awaitJoin(t, srv, "node")
		t.Logf("node: %s, then %s", first.ja4, second.ja4)
		if first.ja4 == second.ja4 {
			t.Skip("node did not resume the session")
		}
		r := &Request{Headers: chromeHeaders, JA4: second.ja4}
		if f, _ := ja4.Check(ctx, r); f.Suspicion != 1 {
			t.Errorf("resumed: ja4 signal %+v, want 1", f)
		}
		if f, _ := cons.Check(ctx, r); f.Reason != ReasonTLSTool {
			t.Errorf("resumed, claiming Chrome: consistency %+v, want %s", f, ReasonTLSTool)
		}
	})

	// Every tool, sending the headers of the Chromium above (or fixed
	// ones of Chrome) over its own TLS: the ja4 signal knows the tool, and
	// the claim of a browser contradicts it.
	chrome := desktop.headers
	if !haveChromium {
		chrome = chromeHeaders
	}
	for _, c := range live {
		if c.fp.Kind != FingerprintTool {
			continue
		}
		r := &Request{Headers: chrome, JA4: c.fp.JA4}
		if f, _ := ja4.Check(ctx, r); f.Suspicion != 1 {
			t.Errorf("%s: ja4 signal %+v, want suspicion 1", c.fp.Client, f)
		}
		if f, _ := cons.Check(ctx, r); f.Suspicion != 1 || f.Reason != ReasonTLSTool {
			t.Errorf("%s with Chrome's headers: consistency %+v, want 1 %s", c.fp.Client, f, ReasonTLSTool)
		}
		// Its own headers with a Chrome User-Agent.
		own := &Request{JA4: c.fp.JA4}
		for _, h := range c.headers {
			if strings.EqualFold(h.Name, "user-agent") {
				h.Value = userAgent(chrome)
			}
			own.Headers = append(own.Headers, h)
		}
		if userAgent(c.headers) == "" { // Node sends none
			own.Headers = append(own.Headers, Header{"User-Agent", userAgent(chrome)})
		}
		if f, _ := cons.Check(ctx, own); f.Suspicion != 1 {
			t.Errorf("%s with a Chrome User-Agent: consistency %+v, want 1", c.fp.Client, f)
		}
	}
}

// defaultSetScores scores, with the default signal set of
// cmd/waitroom/internal/config.DefaultSignals (headers 60, ja4 30,
// consistency 40, client 30; rate 40 adds nothing to a first request),
// the live clients: each tool as it comes and sending Chrome's headers,
// and Chromium headless, with a desktop Chrome User-Agent (its page
// reports navigator.webdriver true, as a browser driven over the DevTools
// protocol does), and as a person's (webdriver false). It returns the
// score of each at the challenge fetch and at the join.
func defaultSetScores(t *testing.T, data []Fingerprint, live []liveClient, headless, desktop liveClient, chrome []Header) map[string][2]int {
	t.Helper()
	h, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ja4, _ := NewJA4Signal(JA4Options{Data: data})
	cons, _ := NewConsistencySignal(ConsistencyOptions{Data: data})
	s, err := NewScorer([]WeightedSignal{{Name: "headers", Weight: 60, Signal: h}, {Name: "ja4", Weight: 30, Signal: ja4},
		{Name: "consistency", Weight: 40, Signal: cons}, {Name: "client", Weight: 30, Signal: ClientSignal{}}}, ScorerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	out := map[string][2]int{}
	score := func(name string, hs []Header, ja4 string, client *ClientReport) {
		fetch := s.Score(context.Background(), &Request{Headers: hs, JA4: ja4})
		join := s.Score(context.Background(), &Request{Headers: hs, JA4: ja4, Join: true, Client: client})
		out[name] = [2]int{fetch.Score, join.Score}
		t.Logf("%-36s fetch %3d %v, join %3d %v", name, fetch.Score, fetch.Reasons, join.Score, join.Reasons)
	}
	for _, c := range live {
		if c.fp.Kind == FingerprintTool {
			score(c.fp.Client, c.headers, c.fp.JA4, nil)
			score(c.fp.Client+" with Chrome's headers", chrome, c.fp.JA4, nil)
		}
	}
	if headless.fp.JA4 != "" {
		score("chromium headless", headless.headers, headless.fp.JA4, &ClientReport{Webdriver: &yes})
		score("chromium headless, desktop UA", desktop.headers, desktop.fp.JA4, &ClientReport{Webdriver: &yes})
		score("chromium as a person", desktop.headers, desktop.fp.JA4, &ClientReport{Webdriver: &no})
	}
	return out
}

func userAgent(hs []Header) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, "user-agent") {
			return h.Value
		}
	}
	return ""
}

// chromeHeaders are the join headers of the Chromium 156 the tests
// drive, in wire order, as desktop Chrome (browsertest.AsDesktopChrome):
// captured by TestBrowserChromiumJoin, for tests that cannot run it.
var chromeHeaders = []Header{
	{"Host", "localhost:39755"}, {"Connection", "keep-alive"}, {"Content-Length", "2"},
	{"sec-ch-ua-platform", `"Linux"`},
	{"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},
	{"sec-ch-ua", `"Chromium";v="156", "Google Chrome";v="156", "Not_A Brand";v="24"`},
	{"Content-Type", "application/json"}, {"sec-ch-ua-mobile", "?0"}, {"Accept", "*/*"},
	{"Origin", "https://localhost:39755"}, {"Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Mode", "cors"},
	{"Sec-Fetch-Dest", "empty"}, {"Referer", "https://localhost:39755/"}, {"Accept-Encoding", "gzip, deflate, br, zstd"},
	{"Accept-Language", "en-US,en;q=0.9"},
}

const fingerprintsAbout = "Fingerprints of HTTP tools and browsers: the JA4 of their TLS ClientHello and, " +
	"for tools, the header fingerprint (challenge.HeaderFingerprint) of their default request. " +
	"Recorded by running each on a development machine against a local TLS listener: " +
	"go test ./challenge -run TestFingerprintData -update adds what the tools installed there send " +
	"(entries seen before stay: older versions are still in use). Tools are the ja4 signal's default " +
	"known-bad list; browsers its known-good list and the consistency signal's reference."

// writeFingerprints merges live into fingerprints.json.
func writeFingerprints(t *testing.T, live []liveClient) {
	t.Helper()
	data := DefaultFingerprints()
	today := time.Now().UTC().Format(time.DateOnly)
	for _, c := range live {
		fp := c.fp
		fp.Recorded = today
		if fp.Kind == FingerprintBrowser {
			fp.Headers = ""
		}
		if i := slices.IndexFunc(data, func(f Fingerprint) bool { return f.Client == fp.Client && f.JA4 == fp.JA4 }); i >= 0 {
			data[i] = fp
		} else {
			data = append(data, fp)
		}
	}
	slices.SortFunc(data, func(a, b Fingerprint) int {
		return strings.Compare(a.Kind+"\x00"+a.Client+"\x00"+a.JA4, b.Kind+"\x00"+b.Client+"\x00"+b.JA4)
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(FingerprintData{About: fingerprintsAbout, Fingerprints: data}); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFingerprints(buf.Bytes()); err != nil {
		t.Fatalf("the new data does not parse: %v", err)
	}
	if err := os.WriteFile("fingerprints.json", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote fingerprints.json: %d entries", len(data))
}
