package scorer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/signature"
)

const (
	token  = "scorer-token-1"
	secret = "5b0e8c2f9a17d4e63c80b1f7a2d59e4c"
)

// fakeScorer is a site's scoring endpoint as a local server: it checks
// the request as a real one would and answers what answer returns.
type fakeScorer struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	last wireRequest
	hdr  http.Header
	body []byte
}

func newFakeScorer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *fakeScorer {
	f := &fakeScorer{t: t, answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req wireRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("scorer request is not JSON: %v", err)
		}
		f.mu.Lock()
		f.last, f.hdr, f.body = req, r.Header.Clone(), body
		f.mu.Unlock()
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("scorer request: %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		f.answer(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func answerJSON(s string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, s)
	}
}

func build(t *testing.T, section string) challenge.Signal {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(section), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := plugins.Scorers.Build(context.Background(), "http", doc.Content[0], plugins.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var request = &challenge.Request{
	Event: "tour-2026",
	IP:    netip.MustParseAddr("::ffff:203.0.113.7"),
	Headers: []challenge.Header{
		{Name: "Host", Value: "shop.example.com"},
		{Name: "user-agent", Value: "Mozilla/5.0"},
		{Name: "Cookie", Value: "session=secret"},
		{Name: "Accept-Language", Value: "en-GB"},
		{Name: "authorization", Value: "Basic eDp5"},
	},
	JA4:     "t13d1516h2_8daaf6152771_02713d6af862",
	Visitor: "v-123",
	Now:     time.Now(),
}

func TestCheck(t *testing.T) {
	f := newFakeScorer(t, answerJSON(`{"score": 42, "reason": "Headless Chrome (CDP)!"}`))
	s := build(t, fmt.Sprintf("url: %s/score\nbearer_token: %s\nsecret: %s\n", f.srv.URL, token, secret))
	got, err := s.Check(context.Background(), request)
	if err != nil {
		t.Fatal(err)
	}
	if want := (challenge.Finding{Suspicion: 0.42, Reason: "external:headless_chrome_cdp"}); got != want {
		t.Errorf("Check = %+v, want %+v", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := wireRequest{
		Event: "tour-2026", IP: "203.0.113.7", JA4: request.JA4, Visitor: "v-123",
		Headers: [][2]string{{"Host", "shop.example.com"}, {"user-agent", "Mozilla/5.0"}, {"Accept-Language", "en-GB"}},
	}
	if fmt.Sprint(f.last) != fmt.Sprint(want) {
		t.Errorf("request %+v\nwant %+v", f.last, want)
	}
	if !strings.Contains(string(f.body), `"headers":[["Host","shop.example.com"],`) {
		t.Errorf("headers not sent as [name, value] pairs: %s", f.body)
	}
	if a := f.hdr.Get("Authorization"); a != "Bearer "+token {
		t.Errorf("Authorization = %q", a)
	}
	if err := signature.Verify([]byte(secret), f.hdr.Get(signature.Header), f.body, time.Now(), time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
}

func TestCheckAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		want   challenge.Finding
		bad    bool // ErrBadAnswer
	}{
		{"zero", answerJSON(`{"score":0,"reason":"fine"}`), challenge.Finding{}, false},
		{"full", answerJSON(`{"score":100,"reason":"known_bad_asn"}`), challenge.Finding{Suspicion: 1, Reason: "external:known_bad_asn"}, false},
		{"fraction, no reason", answerJSON(`{"score":12.5}`), challenge.Finding{Suspicion: 0.125, Reason: "external:unspecified"}, false},
		{"extra fields", answerJSON(`{"score":50,"reason":"x","model":"v7"}`), challenge.Finding{Suspicion: 0.5, Reason: "external:x"}, false},
		{"above range", answerJSON(`{"score":101,"reason":"x"}`), challenge.Finding{}, true},
		{"below range", answerJSON(`{"score":-1}`), challenge.Finding{}, true},
		{"no score", answerJSON(`{"reason":"x"}`), challenge.Finding{}, true},
		{"score as string", answerJSON(`{"score":"50"}`), challenge.Finding{}, true},
		{"bad JSON", answerJSON(`{"score":`), challenge.Finding{}, true},
		{"HTML", answerJSON(`<html>502 Bad Gateway</html>`), challenge.Finding{}, true},
		{"500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"score":1}`, 500) }, challenge.Finding{}, true},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }, challenge.Finding{}, true},
		{"huge", answerJSON(`{"score":1,"reason":"` + strings.Repeat("a", MaxResponseBytes) + `"}`), challenge.Finding{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeScorer(t, tc.answer)
			s := build(t, "url: "+f.srv.URL+"\n")
			got, err := s.Check(context.Background(), request)
			if got != tc.want {
				t.Errorf("Check = %+v, want %+v", got, tc.want)
			}
			if errors.Is(err, ErrBadAnswer) != tc.bad || !tc.bad && err != nil {
				t.Errorf("Check error = %v, want bad answer: %v", err, tc.bad)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "scorer: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestCheckTimeout(t *testing.T) {
	f := newFakeScorer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		answerJSON(`{"score":99}`)(w, r)
	})
	s := build(t, "url: "+f.srv.URL+"\ntimeout: 50ms\n")
	start := time.Now()
	got, err := s.Check(context.Background(), request)
	if !errors.Is(err, context.DeadlineExceeded) || got != (challenge.Finding{}) {
		t.Errorf("Check = %+v, %v; want a zero finding and a deadline error", got, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Check took %s with a 50ms timeout", d)
	}
}

func TestCheckDefaultTimeout(t *testing.T) {
	f := newFakeScorer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	s := build(t, "url: "+f.srv.URL+"\n")
	start := time.Now()
	if _, err := s.Check(context.Background(), request); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check error = %v", err)
	}
	if d := time.Since(start); d < DefaultTimeout || d > time.Second {
		t.Errorf("Check took %s, default timeout %s", d, DefaultTimeout)
	}
}

func TestOmitHeaders(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  []string
	}{
		{"", []string{"Host", "user-agent", "Accept-Language"}},
		{"omit_headers: []\n", []string{"Host", "user-agent", "Cookie", "Accept-Language", "authorization"}},
		{"omit_headers: [HOST, User-Agent]\n", []string{"Cookie", "Accept-Language", "authorization"}},
	} {
		f := newFakeScorer(t, answerJSON(`{"score":1}`))
		s := build(t, "url: "+f.srv.URL+"\n"+tc.extra)
		if _, err := s.Check(context.Background(), request); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range f.last.Headers {
			names = append(names, h[0])
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%q: sent %q, want %q", tc.extra, names, tc.want)
		}
		if f.hdr.Get("Authorization") != "" || f.hdr.Get(signature.Header) != "" {
			t.Errorf("credentials sent without bearer_token or secret")
		}
	}
}

func TestUnreachable(t *testing.T) {
	f := newFakeScorer(t, answerJSON(`{}`))
	url := f.srv.URL
	f.srv.Close()
	s := build(t, "url: "+url+"\n")
	if got, err := s.Check(context.Background(), request); err == nil || got != (challenge.Finding{}) {
		t.Errorf("Check = %+v, %v", got, err)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "unspecified",
		"!!!":                          "unspecified",
		"headless":                     "headless",
		"Headless Chrome":              "headless_chrome",
		"  a--b__c  ":                  "a_b_c",
		"ünïcode":                      "n_code",
		"rate>100/s":                   "rate_100_s",
		strings.Repeat("ab", 40):       strings.Repeat("ab", 20),
		strings.Repeat("a", 39) + " b": strings.Repeat("a", 39),
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, section string
		paths         []string
	}{
		{"minimal", "url: http://10.0.0.9:8000/score\n", nil},
		{"everything", "url: https://score.internal/v1\ntimeout: 80ms\nbearer_token: abc\nsecret: " + secret + "\nomit_headers: [Cookie]\n", nil},
		{"bearer over loopback http", "url: http://127.0.0.1:8000/\nbearer_token: abc\n", nil},
		{"guessable secret", "url: https://s.example.com/\nsecret: " + strings.Repeat("ab", 20) + "\n", []string{"secret"}},
		{"empty", "{}", []string{"url"}},
		{"unknown key", "url: https://s.example.com/\ntoken: x\n", []string{""}},
		{"every problem", "url: http://score.example.com/\ntimeout: 10s\nbearer_token: 'a b'\nsecret: short\nomit_headers: ['', 'X:Y']\n",
			[]string{"url", "timeout", "bearer_token", "secret", "omit_headers[0]", "omit_headers[1]"}},
		{"unexpanded", "url: https://s.example.com/\nbearer_token: ${SCORER_TOKEN}\nsecret: ${SCORER_SECRET_LONG_ENOUGH_TO_PASS_32}\n", []string{"bearer_token", "secret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.section), &doc); err != nil {
				t.Fatal(err)
			}
			err := plugins.Scorers.Validate("http", doc.Content[0])
			var got []string
			for _, fe := range plugins.FieldErrors(err) {
				got = append(got, fe.Path)
			}
			if !slices.Equal(got, tc.paths) {
				t.Errorf("error paths %q, want %q\n%v", got, tc.paths, err)
			}
		})
	}
}

var reasonRE = regexp.MustCompile(`^external:[a-z0-9_]{1,40}$`)

// FuzzParseAnswer feeds arbitrary answers to the parser: it must not
// panic, and what it accepts is a suspicion in [0, 1] with a reason safe
// for metrics.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{`{"score":42,"reason":"Headless Chrome"}`, `{"score":0}`, `{"score":100.0,"reason":"\u00e9\u0000"}`, `{"score":1e309}`, `{"score":-0}`, `[]`, `null`, ``, `{"score":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseAnswer(b)
		if err != nil {
			if got != (challenge.Finding{}) || !errors.Is(err, ErrBadAnswer) {
				t.Fatalf("parseAnswer(%q) = %+v, %v", b, got, err)
			}
			return
		}
		if !(got.Suspicion >= 0 && got.Suspicion <= 1) {
			t.Fatalf("suspicion %v", got.Suspicion)
		}
		if got.Suspicion == 0 && got.Reason != "" || got.Suspicion > 0 && !reasonRE.MatchString(got.Reason) {
			t.Fatalf("finding %+v", got)
		}
	})
}
