package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/report"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// reportConfig is a server with its admission store in Redis (so that
// the CLI reads it while the server runs) and an admin listener; the
// event is open from the start, so its tranches are drawn as they close.
const reportConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
admin:
  listen: 127.0.0.1:0
  token: %[1]s
admission:
  store: redis
  redis: {url: %[2]s}
origins:
  - name: shop
    addresses: ["127.0.0.1:9"]
routes:
  - prefix: /show/
    event: show
events:
  - id: show
    landing_path: /show/
`

// TestReportCLIMatchesEndpoint: with a server running, `waitroom report`
// prints byte for byte what GET /admin/v1/events/show/report answers,
// in each format, and what it prints is the server's record: the joins
// made, the defence actions noted, the draw with its audit link.
func TestReportCLIMatchesEndpoint(t *testing.T) {
	rd := redistest.Start(t, redistest.Options{})
	secret := make([]byte, 32)
	rand.Read(secret)
	token := hex.EncodeToString(secret)
	path := writeIn(t, t.TempDir(), "waitroom.yaml", fmt.Sprintf(reportConfig, token, rd.URL()))
	cfg, err := config.Check(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := app.NewServe(ctx, cfg, slog.New(slog.DiscardHandler), app.Listeners{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	// The leader counts from its first tick (its baseline): join after it.
	for deadline := time.Now().Add(30 * time.Second); !w.Engine.Figures("show").Leader; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine did not tick")
		}
	}
	for range 5 {
		if _, _, err := w.Engine.Join(ctx, "show", admission.JoinRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	w.Engine.NoteDefence("show", "heavy_pow")
	// Wait until a tick has counted the joins and their tranche is
	// drawn, then write the minute in progress.
	var r report.Report
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the joins did not reach the report: %+v", r.Totals)
		}
		if err := w.Engine.FlushMinutes(ctx); err != nil {
			t.Fatal(err)
		}
		rep, err := app.EventReport(ctx, cfg, w.Engine.Store(), "show")
		if err != nil {
			t.Fatal(err)
		}
		if r = *rep; r.Totals.Arrivals == 5 && len(r.Draws) == 1 {
			break
		}
	}
	if r.Totals.Defence.HeavyPoW != 1 || r.Draws[0].Count != 5 || !strings.HasPrefix(r.Draws[0].Audit, "/_wr/api/draws/show/") {
		t.Fatalf("report = %+v", r)
	}

	base := "http://" + w.AdminAddr().String() + "/admin/v1/events/show/report"
	for _, f := range []string{"json", "csv", "html"} {
		t.Run(f, func(t *testing.T) {
			// The record changes at the leader's next write (every
			// 15 s, or when the minute ends): compare the CLI with
			// the endpoint when the endpoint answered alike before
			// and after it.
			for attempt := 0; ; attempt++ {
				before := get(t, base+"?format="+f, token)
				code, stdout, stderr := runCLI(t, "report", "-c", path, "--event", "show", "--format", f)
				after := get(t, base+"?format="+f, token)
				if code != 0 {
					t.Fatalf("waitroom report: exit %d: %s", code, stderr)
				}
				if !bytes.Equal(before, after) {
					if attempt == 5 {
						t.Fatal("the record changed at every attempt")
					}
					continue
				}
				if stdout != string(before) {
					t.Fatalf("the CLI printed\n%s\nthe endpoint answered\n%s", stdout, before)
				}
				if f == "json" {
					var back report.Report
					if err := json.Unmarshal(before, &back); err != nil || back.Totals.Arrivals != 5 {
						t.Fatalf("endpoint JSON: %v, %+v", err, back.Totals)
					}
				}
				return
			}
		})
	}

	out := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runCLI(t, "report", "-c", path, "--event", "show", "--format", "html", "--out", out); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", "-c", path, "--event", "show", "--out", out); code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("--out over an existing file: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", "-c", path, "--event", "nope"); code != 1 || !strings.Contains(stderr, `no event "nope"`) {
		t.Fatalf("unknown event: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "report", "-c", path, "--event", "show", "--format", "xml"); code != 2 {
		t.Fatalf("--format xml: exit %d, want 2", code)
	}
	for _, c := range []struct {
		url, token string
		status     int
		code       string
	}{
		{base, "", http.StatusUnauthorized, "unauthorized"},
		{base + "?format=xml", token, http.StatusBadRequest, "bad_format"},
		{strings.Replace(base, "/show/", "/nope/", 1), token, http.StatusNotFound, "unknown_event"},
	} {
		resp := do(t, c.url, c.token)
		var e struct{ Error, Message string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.status || e.Error != c.code || e.Message == "" {
			t.Errorf("GET %s: %d %+v, want %d %s", c.url, resp.StatusCode, e, c.status, c.code)
		}
	}
	resp := do(t, base+"?format=html", token)
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HTML report headers: %v", resp.Header)
	}
}

func do(t *testing.T, url, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func get(t *testing.T, url, token string) []byte {
	t.Helper()
	resp := do(t, url, token)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", url, resp.StatusCode, b, err)
	}
	return b
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}
