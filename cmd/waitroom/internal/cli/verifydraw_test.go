package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// drawnDemo runs the demo (the real proxy and engine) with visitors
// joined before its on-sale, and returns its base URL once the
// pre-queue's draw is published.
func drawnDemo(t *testing.T, visitors int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *app.Demo, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.RunDemo(ctx, app.DemoOptions{Listen: "127.0.0.1:0", Out: io.Discard,
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			Started: func(d *app.Demo) { started <- d },
			Configure: func(c *config.Config) {
				c.Events[0].OnSaleAt = config.AfterStart(3 * time.Second)
			}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the demo stopped with %v", err)
		}
	})
	var d *app.Demo
	select {
	case d = <-started:
	case err := <-done:
		t.Fatalf("the demo did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not start within 30 s")
	}
	base := strings.TrimSuffix(d.URL, "/")
	for i := range visitors {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		req, _ := http.NewRequest("POST", base+"/_wr/api/join", strings.NewReader(`{"event":"demo-concert"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", fmt.Sprintf("visitor-%d", i))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("join %d: %s", i, resp.Status)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/_wr/api/draws/demo-concert/0")
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Drawn bool }
		json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if a.Drawn {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatal("the pre-queue was not drawn within 30 s of the on-sale")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tamper serves real's audit JSON changed by f.
func tamper(t *testing.T, real string, f func(a map[string]any)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(real + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var a map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		f(a)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestVerifyDraw checks a real proxy's draw (by its page's URL and its
// JSON's), with small pages so that it walks several, and then tampered
// copies of it, each refused with what does not match.
func TestVerifyDraw(t *testing.T) {
	t.Parallel()
	base := drawnDemo(t, 23)
	for _, u := range []string{base + "/_wr/draw/demo-concert/0", base + "/_wr/api/draws/demo-concert/0?offset=5"} {
		code, out, errOut := run(t, "verify-draw", u)
		if code != 0 || !strings.HasPrefix(out, "OK: the draw of tranche 0 of event demo-concert (lane public) checks out") ||
			!strings.Contains(out, "entries     23, queue numbers 1 to 23") {
			t.Fatalf("verify-draw %s: exit %d\n%s%s", u, code, out, errOut)
		}
		t.Logf("verify-draw %s:\n%s", u, out)
	}
	var a struct{ Commitment string }
	resp, err := http.Get(base + "/_wr/api/draws/demo-concert/0")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if code, out, errOut := run(t, "verify-draw", "-commitment", strings.ToUpper(a.Commitment), base+"/_wr/draw/demo-concert/0"); code != 0 || !strings.Contains(out, "the one seen before the draw") {
		t.Errorf("with the commitment seen: exit %d %s %s", code, out, errOut)
	}
	if code, _, errOut := run(t, "verify-draw", "-commitment", strings.Repeat("0", 64), base+"/_wr/draw/demo-concert/0"); code != 1 || !strings.Contains(errOut, "is not the "+strings.Repeat("0", 64)+" seen before the draw") {
		t.Errorf("with another commitment: exit %d %s", code, errOut)
	}
	au, _ := auditURL(base + "/_wr/draw/demo-concert/0")
	v := &drawVerifier{client: verifyClient(10 * time.Second), base: au, ua: "test", pageSize: 4}
	if sum, err := v.run(t.Context()); err != nil || !strings.Contains(sum, "entries     23") {
		t.Fatalf("in pages of 4: %v\n%s", err, sum)
	}

	hashes := func(a map[string]any) []any { return a["hashes"].([]any) }
	for _, c := range []struct {
		name string
		f    func(a map[string]any)
		want string
	}{
		{"swapped entries", func(a map[string]any) {
			h := hashes(a)
			if len(h) > 3 {
				h[2], h[3] = h[3], h[2]
			}
		}, "entry 4 ("},
		{"another seed", func(a map[string]any) {
			a["seed"] = strings.Repeat("ab", 32)
		}, ", not the commitment"},
		{"an entry dropped", func(a map[string]any) {
			if h := hashes(a); len(h) > 0 {
				a["hashes"] = h[1:]
			}
		}, "the pages hold 22 entries, but the draw says it has 23"},
		{"an entry twice", func(a map[string]any) {
			h := hashes(a)
			h[5] = h[4]
		}, "entry 6 ("},
		{"drawn before it closed", func(a map[string]any) {
			a["drawn_at"] = "2000-01-01T00:00:00Z"
		}, "before the tranche closed"},
	} {
		fake := tamper(t, base, c.f)
		code, out, errOut := run(t, "verify-draw", fake+"/_wr/draw/demo-concert/0")
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s\nwant %q", c.name, code, out, errOut, c.want)
		}
	}
}

func TestVerifyDrawUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify-draw"}, "give the URL of one draw"},
		{[]string{"verify-draw", "ftp://x/_wr/draw/e/0"}, "must be an http or https URL"},
		{[]string{"verify-draw", "https://shop.example/events/e"}, "is not the path of a draw"},
		{[]string{"verify-draw", "https://shop.example/_wr/draw/e/01"}, "is not the path of a draw"},
		{[]string{"verify-draw", "https://user:pw@shop.example/_wr/draw/e/0"}, "must be an http or https URL"},
		{[]string{"verify-draw", "-commitment", "abc", "https://shop.example/_wr/draw/e/0"}, "-commitment \"abc\" is not 32 bytes of hex"},
	} {
		if code, _, errOut := run(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
	u, err := auditURL("https://shop.example/q/_wr/draw/summer/12?lane=presale&x=1")
	want := "https://shop.example/q/_wr/api/draws/summer/12?" + url.Values{"lane": {"presale"}}.Encode()
	if err != nil || u.String() != want {
		t.Errorf("auditURL = %v, %v", u, err)
	}
}

// FuzzAuditURL: any input gives an error or an http(s) audit URL.
func FuzzAuditURL(f *testing.F) {
	f.Add("https://shop.example/_wr/draw/e/0")
	f.Add("http://[::1]:80/x/api/draws/e/5?lane=p")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := auditURL(s)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || !drawPathRe.MatchString(u.Path) || !strings.Contains(u.Path, "/api/draws/") {
			t.Fatalf("auditURL(%q) = %v", s, u)
		}
	})
}
