package browsertest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// One browser for the package's tests, as the tests of a package would
// share one.
func TestBrowser(t *testing.T) {
	t.Setenv(ArtifactsEnv, t.TempDir())
	b := Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "c", Value: "tab-a", Path: "/"})
		case "/throw":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><p>boom</p><script>throw new Error("deliberate")</script>`)
			return
		case "/late":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><p id="x">waiting</p><script>setTimeout(function(){document.getElementById("x").textContent="done"},300)</script>`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta name="viewport" content="width=device-width"></head><body><h1>Hello</h1><p id="al">%s</p><p id="cookie">%s</p></body></html>`,
			r.Header.Get("Accept-Language"), r.Header.Get("Cookie"))
	}))
	t.Cleanup(srv.Close)

	t.Run("navigate, wait, evaluate, screenshot", func(t *testing.T) {
		ctx := b.NewTab(t)
		Navigate(t, ctx, srv.URL+"/late")
		WaitFor(t, ctx, "late text", `document.getElementById("x").textContent === "done"`)
		if got := Eval[string](t, ctx, `document.getElementById("x").textContent`); got != "done" {
			t.Errorf("text %q", got)
		}
		path := Screenshot(t, ctx, "late page")
		png, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Error("screenshot is not a PNG")
		}
		want := filepath.Join(os.Getenv(ArtifactsEnv), "TestBrowser", "navigate__wait__evaluate__screenshot", "late_page.png")
		if path != want {
			t.Errorf("screenshot at %s; want %s", path, want)
		}
	})

	t.Run("accept-language and phone", func(t *testing.T) {
		ctx := b.NewTab(t, WithAcceptLanguage("de-DE,de;q=0.9"), WithPhone())
		Navigate(t, ctx, srv.URL+"/")
		if got := Eval[string](t, ctx, `document.getElementById("al").textContent`); got != "de-DE,de;q=0.9" {
			t.Errorf("server saw Accept-Language %q", got)
		}
		if w := Eval[int](t, ctx, `window.innerWidth`); w != 390 {
			t.Errorf("viewport width %d; want 390", w)
		}
		if dpr := Eval[float64](t, ctx, `window.devicePixelRatio`); dpr != 2 {
			t.Errorf("device pixel ratio %v; want 2", dpr)
		}
	})

	t.Run("tabs do not share cookies", func(t *testing.T) {
		a := b.NewTab(t)
		Navigate(t, a, srv.URL+"/set")
		Navigate(t, a, srv.URL+"/")
		if got := Eval[string](t, a, `document.getElementById("cookie").textContent`); got != "c=tab-a" {
			t.Fatalf("tab a sent cookie %q", got)
		}
		other := b.NewTab(t)
		Navigate(t, other, srv.URL+"/")
		if got := Eval[string](t, other, `document.getElementById("cookie").textContent`); got != "" {
			t.Errorf("a fresh tab sent cookie %q", got)
		}
	})

	t.Run("tabs in parallel", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 3 {
			ctx := b.NewTab(t)
			wg.Go(func() {
				// Only the goroutine's own tab; t.Fatal is not allowed here,
				// so report through Errorf.
				if err := do(ctx, chromedp.Navigate(srv.URL+"/?tab="+fmt.Sprint(i))); err != nil {
					t.Errorf("tab %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	})

	// An uncaught exception fails the test that opened the tab; AllowJSErrors
	// turns that off.
	for _, allow := range []bool{false, true} {
		rec := &recorder{TB: t}
		t.Run(fmt.Sprintf("exception allowed=%v", allow), func(t *testing.T) {
			rec.TB = t
			var opts []TabOption
			if allow {
				opts = append(opts, AllowJSErrors())
			}
			ctx := b.NewTab(rec, opts...)
			Navigate(t, ctx, srv.URL+"/throw")
			WaitFor(t, ctx, "page", `document.body && document.body.textContent.includes("boom")`)
			// Give the console event time to arrive before the tab closes:
			// wait for a round trip through the page after the exception.
			Eval[int](t, ctx, `1`)
		})
		got := strings.Join(rec.errs, "\n")
		if allow && got != "" {
			t.Errorf("allowed exception reported: %s", got)
		}
		if !allow && !strings.Contains(got, "deliberate") {
			t.Errorf("uncaught exception not reported; errors: %q", got)
		}
	}
}

// recorder keeps Errorf calls instead of failing the test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	if err := check(filepath.Join(t.TempDir(), "no-chromium")); err == nil || !strings.Contains(err.Error(), "make deps") {
		t.Errorf("check of a missing binary: %v", err)
	}
	if err := check(t.TempDir()); err == nil {
		t.Error("a directory passed the check")
	}
	if err := Check(); err != nil {
		t.Errorf("chromium is needed for the page tests: %v", err)
	}
}

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TestX", "TestX"},
		{"TestX/sub test", filepath.Join("TestX", "sub_test")},
		{"TestX/../../etc", filepath.Join("TestX", "_", "_", "etc")},
		{"a/b:c*d", filepath.Join("a", "b_c_d")},
		{"", "_"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := safeName(tt.in); got != tt.want {
				t.Errorf("safeName(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}
