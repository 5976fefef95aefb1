package app

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// replicaConfig is `waitroom serve` with the admission store in Redis and
// the bot defence on, as every replica of a deployment runs it.
const replicaConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
admin:
  listen: ""
admission:
  store: redis
  redis: {url: %[2]s}
bot_defence:
  secret: %[1]s
  signals: []
` + showEvent + `    challenge:
      mode: on
      light: {bits: 4, puzzles: 16}
`

// startReplica runs one `waitroom serve` replica of cfgText and returns
// its base URL.
func startReplica(t *testing.T, cfgText string) string {
	t.Helper()
	cfg, err := config.Parse([]byte(cfgText), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := config.ValidateFor(cfg, config.RoleProxy); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := NewServe(context.Background(), cfg, log, Listeners{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("a replica stopped with %v", err)
		}
	})
	return "http://" + w.Addr().String()
}

// TestReplicasShareTheReplayGuard: two replicas over one Redis. A
// challenge issued and redeemed at one cannot be redeemed again at the
// other (409), while a fresh challenge from the other joins.
func TestReplicasShareTheReplayGuard(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	cfgText := fmt.Sprintf(replicaConfig, randomHex(32), srv.URL(),
		strings.TrimPrefix(origin.URL, "http://"))
	a, b := startReplica(t, cfgText), startReplica(t, cfgText)

	body := solvedJoin(t, a)
	if status, _ := postJoin(t, a, body); status != http.StatusOK {
		t.Fatalf("join at replica a: %d", status)
	}
	if status, e := postJoin(t, b, body); status != http.StatusConflict || e != "challenge_used" {
		t.Fatalf("the same solution at replica b: %d %q, want 409 challenge_used", status, e)
	}
	if status, e := postJoin(t, a, body); status != http.StatusConflict || e != "challenge_used" {
		t.Fatalf("the same solution again at replica a: %d %q, want 409 challenge_used", status, e)
	}
	if status, _ := postJoin(t, b, solvedJoin(t, b)); status != http.StatusOK {
		t.Fatalf("a fresh challenge at replica b: %d", status)
	}
}

const replicaUA = "Mozilla/5.0 (replica test)"

// solvedJoin fetches a challenge from base and returns a join body with
// its solution.
func solvedJoin(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/_wr/api/challenge?event=show", nil)
	req.Header.Set("User-Agent", replicaUA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Action string `json:"action"`
		PoW    struct {
			Token   string `json:"token"`
			Seed    string `json:"seed"`
			Bits    uint8  `json:"bits"`
			Puzzles uint8  `json:"puzzles"`
		} `json:"pow"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || c.Action != "pow" {
		t.Fatalf("challenge: %s, action %q, %v", resp.Status, c.Action, err)
	}
	seed, err := hex.DecodeString(c.PoW.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(seed) != 16 {
		t.Fatalf("seed %q is not 16 bytes", c.PoW.Seed)
	}
	nonces := challenge.Solve([16]byte(seed), c.PoW.Bits, c.PoW.Puzzles)
	b, _ := json.Marshal(map[string]any{"event": "show", "pow": map[string]any{"token": c.PoW.Token, "nonces": nonces}})
	return string(b)
}

// postJoin posts a join and returns its status and error code.
func postJoin(t *testing.T, base, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/_wr/api/join", strings.NewReader(body))
	req.Header.Set("User-Agent", replicaUA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

// TestReplicasShareTheRateLimit: with serve.rate_limits.shared, one
// address gets one API budget across the replicas, not one per replica.
func TestReplicasShareTheRateLimit(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	cfgText := fmt.Sprintf(replicaConfig, randomHex(32), srv.URL(),
		strings.TrimPrefix(origin.URL, "http://"))
	cfgText = strings.Replace(cfgText, "  cookies: {secure: never}\n",
		"  cookies: {secure: never}\n  rate_limits: {shared: true, per_ip: {rate: 0.001, burst: 4}, per_prefix: {rate: 0}}\n", 1)
	a, b := startReplica(t, cfgText), startReplica(t, cfgText)
	passed := 0
	for i := range 10 {
		base := a
		if i%2 == 1 {
			base = b
		}
		resp, err := http.Get(base + "/_wr/api/status?event=show")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
		case http.StatusUnauthorized: // no ticket: past the limit
			passed++
		default:
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if passed != 4 {
		t.Fatalf("%d of 10 status requests over two replicas passed; want the shared burst, 4", passed)
	}
}
