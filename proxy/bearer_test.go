package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// appStatus is the status JSON with the tokens an app asked for.
type appStatus struct {
	Status          string  `json:"status"`
	Redirect        *string `json:"redirect"`
	Ticket          string  `json:"ticket"`
	TicketExpiresAt string  `json:"ticket_expires_at"`
	Pass            string  `json:"pass"`
	PassExpiresAt   string  `json:"pass_expires_at"`
}

// A native app without cookies: it joins asking for its tokens in the
// answer, polls with the ticket as a bearer token, gets the pass in the
// answer once admitted, and calls the origin's API with the pass as a
// bearer token (removed before the origin, which never sees waitroom's
// credential) or, when the API needs Authorization for itself, in
// X-Waitroom-Pass (the app's own Authorization goes through untouched).
func TestNativeAppWithBearerTokens(t *testing.T) {
	r := newRig(t)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string, header ...string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
		req.Header.Set("User-Agent", "ShopApp/3.1 (iOS 19)")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, resp.Header, b.String()
	}
	decode := func(code int, body string) appStatus {
		t.Helper()
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		var s appStatus
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return s
	}

	// Without asking, a join's answer carries no token.
	code, _, body := do("POST", "/_wr/api/join", `{"event":"show"}`)
	if st := decode(code, body); st.Ticket != "" {
		t.Fatal("a join that did not ask got its ticket in the body")
	}
	code, _, body = do("POST", "/_wr/api/join", `{"event":"show"}`, "X-Waitroom-Tokens", "body")
	st := decode(code, body)
	if st.Ticket == "" || st.TicketExpiresAt == "" {
		t.Fatalf("join asking for tokens: %s", body)
	}
	ticket := st.Ticket
	for d := 11; d < 20 && st.Status != "admitted"; d++ {
		r.tick(t, secs(d))
		code, _, body = do("GET", "/_wr/api/status?event=show", "", "Authorization", "Bearer "+ticket)
		st = decode(code, body)
		if st.Ticket != "" {
			ticket = st.Ticket // renewed
		}
	}
	if st.Status != "admitted" || st.Pass == "" || st.PassExpiresAt == "" {
		t.Fatalf("never admitted with a pass in the body: %s", body)
	}
	if _, err := time.Parse(time.RFC3339, st.PassExpiresAt); err != nil {
		t.Fatalf("pass_expires_at %q: %v", st.PassExpiresAt, err)
	}
	pass := st.Pass

	// The pass as a bearer token: through, and the origin never sees it.
	if code, _, body := do("GET", "/show/api/seats", "", "Authorization", "Bearer "+pass, "Accept", "application/json"); body != "origin:/show/api/seats" {
		t.Fatalf("bearer pass: %d %s", code, body)
	}
	if s := r.origin.last(t); s.authorization != "" || s.visitor == "" {
		t.Fatalf("the origin saw Authorization %q (visitor %q)", s.authorization, s.visitor)
	}
	// The pass in X-Waitroom-Pass, the app's own credential in
	// Authorization: both through, the app's to the origin.
	if _, _, body := do("GET", "/show/api/cart", "", "X-Waitroom-Pass", pass, "Authorization", "Bearer app-user-token"); body != "origin:/show/api/cart" {
		t.Fatalf("X-Waitroom-Pass: %s", body)
	}
	if s := r.origin.last(t); s.authorization != "Bearer app-user-token" {
		t.Fatalf("the origin saw Authorization %q, want the app's own", s.authorization)
	}
	// The app's own bearer token is not a pass: the queue, and the
	// origin sees nothing.
	n := r.origin.count()
	if code, _, body := do("GET", "/show/api/cart", "", "Authorization", "Bearer app-user-token", "Accept", "application/json"); code == 200 && strings.HasPrefix(body, "origin:") {
		t.Fatal("an app's own bearer token passed the gate")
	}
	// Nor does a ticket, a pass twice, or another scheme.
	for _, h := range [][]string{
		{"Authorization", "Bearer " + ticket},
		{"Authorization", "Basic " + pass},
		{"Authorization", "Bearer " + pass + " " + pass},
	} {
		if _, _, body := do("GET", "/show/api/cart", "", append(h, "Accept", "application/json")...); strings.HasPrefix(body, "origin:") {
			t.Fatalf("%q passed the gate", h)
		}
	}
	if r.origin.count() != n {
		t.Fatal("a request without a valid pass reached the origin")
	}
	// A ticket that is no bearer token's to give: the JSON error.
	if code, _, _ := do("GET", "/_wr/api/status?event=show", "", "Authorization", "Bearer "+pass); code != http.StatusUnauthorized {
		t.Fatalf("a pass as the ticket: %d", code)
	}
}
