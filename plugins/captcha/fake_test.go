package captcha

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSiteverify is a provider's siteverify endpoint as a local server,
// speaking its wire format: a form POST of secret, response, remoteip
// (and sitekey for hCaptcha), answered with the provider's JSON. Tokens
// name the scenario: "ok-1" is a good token, "wronghost-1" one solved on
// another site, and so on (see answer). Like the real services it
// accepts each token once.
type fakeSiteverify struct {
	t      *testing.T
	kind   string
	secret string
	// What a successful answer says unless the scenario changes it.
	hostname string
	action   string
	score    float64

	srv *httptest.Server

	mu     sync.Mutex
	calls  int
	seen   map[string]bool
	lastIP string
}

func newFake(t *testing.T, kind string) *fakeSiteverify {
	f := &fakeSiteverify{
		t: t, kind: kind, secret: "0x" + kind + "-secret",
		hostname: "tickets.example.com", action: "join", score: 0.9,
		seen: map[string]bool{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSiteverify) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeSiteverify) LastIP() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastIP
}

func (f *fakeSiteverify) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.t.Errorf("%s siteverify: method %s, want POST", f.kind, r.Method)
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.t.Errorf("%s siteverify: Content-Type %q", f.kind, ct)
	}
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("%s siteverify: %v", f.kind, err)
		return
	}
	if len(r.URL.RawQuery) != 0 {
		f.t.Errorf("%s siteverify: parameters in the URL: %q", f.kind, r.URL.RawQuery)
	}
	token := r.PostForm.Get("response")
	f.mu.Lock()
	f.calls++
	f.lastIP = r.PostForm.Get("remoteip")
	spent := f.seen[token]
	f.seen[token] = true
	f.mu.Unlock()

	if f.kind == HCaptcha && r.PostForm.Get("sitekey") != "site-key" {
		f.t.Errorf("hcaptcha siteverify: sitekey %q", r.PostForm.Get("sitekey"))
	}
	if f.kind != HCaptcha && r.PostForm.Has("sitekey") {
		f.t.Errorf("%s siteverify: unexpected sitekey", f.kind)
	}

	switch {
	case r.PostForm.Get("secret") == "":
		f.reject(w, "missing-input-secret")
		return
	case r.PostForm.Get("secret") != f.secret:
		f.reject(w, "invalid-input-secret")
		return
	case token == "":
		f.reject(w, "missing-input-response")
		return
	case spent:
		f.reject(w, f.spentCode())
		return
	}

	scenario, _, _ := strings.Cut(token, "-")
	ans := f.success(time.Now().Add(-10 * time.Second))
	switch scenario {
	case "ok":
	case "bad":
		f.reject(w, "invalid-input-response")
		return
	case "wronghost":
		ans["hostname"] = "evil.example.net"
	case "nohost":
		delete(ans, "hostname")
	case "wrongaction":
		ans["action"] = "login"
	case "old":
		ans["challenge_ts"] = f.ts(time.Now().Add(-11 * time.Minute))
	case "lowscore":
		ans["score"] = 0.1
	case "5xx":
		http.Error(w, "upstream connect error", http.StatusBadGateway)
		return
	case "429":
		w.WriteHeader(http.StatusTooManyRequests)
		return
	case "slow":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return
	case "malformed":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>Service temporarily unavailable</html>"))
		return
	case "huge":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"success":true,"hostname":"` + strings.Repeat("a", MaxResponseBytes) + `"}`))
		return
	default:
		f.t.Errorf("fake siteverify: unknown scenario %q", scenario)
	}
	f.write(w, http.StatusOK, ans)
}

func (f *fakeSiteverify) spentCode() string {
	if f.kind == HCaptcha {
		return "invalid-or-already-seen-response"
	}
	return "timeout-or-duplicate"
}

// ts formats t the way the provider does.
func (f *fakeSiteverify) ts(t time.Time) string {
	switch f.kind {
	case Turnstile:
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	case HCaptcha:
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t.UTC().Format("2006-01-02T15:04:05Z07:00")
}

// success is a provider's answer to a good token.
func (f *fakeSiteverify) success(solved time.Time) map[string]any {
	ans := map[string]any{
		"success":      true,
		"challenge_ts": f.ts(solved),
		"hostname":     f.hostname,
		"error-codes":  []string{},
	}
	switch f.kind {
	case Turnstile:
		ans["action"] = f.action
		ans["cdata"] = "sessionid-123"
		ans["metadata"] = map[string]any{"interactive": false}
	case HCaptcha:
		ans["credit"] = false
		delete(ans, "error-codes")
	case ReCAPTCHA:
		if f.action != "" {
			ans["action"] = f.action
			ans["score"] = f.score
		}
	}
	return ans
}

func (f *fakeSiteverify) reject(w http.ResponseWriter, code string) {
	f.write(w, http.StatusOK, map[string]any{"success": false, "error-codes": []string{code}})
}

func (f *fakeSiteverify) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
