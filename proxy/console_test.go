package proxy

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAdminServesConsole: the admin listener serves the console's pages
// beside the bearer API, each with its own credential: the API does not
// take the console's cookie, the console does not take the bearer token,
// and an unknown API path is still the API's JSON 404.
func TestAdminServesConsole(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	get := func(path string, hdr ...string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), string(b)
	}
	if code, ct, body := get("/admin/"); code != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, `name="token"`) {
		t.Fatalf("/admin/: %d %s", code, ct)
	}
	if code, _, _ := get("/admin/v1/events", "Authorization", "Bearer "+adminToken); code != 200 {
		t.Fatalf("the API with its token: %d", code)
	}
	if code, ct, body := get("/admin/v1/nothing", "Authorization", "Bearer "+adminToken); code != 404 || ct != "application/json" || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("an unknown API path: %d %s %s", code, ct, body)
	}
	if code, _, _ := get("/admin/stream", "Authorization", "Bearer "+adminToken); code != http.StatusUnauthorized {
		t.Fatalf("the console's stream with the bearer token: %d", code)
	}
	// Sign in to the console; its cookie opens the console, not the API.
	req, _ := http.NewRequest("POST", base+"/admin/login", strings.NewReader(url.Values{"token": {adminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var session string
	for _, c := range res.Cookies() {
		if c.Name == "wr_console" {
			session = c.Name + "=" + c.Value
		}
	}
	if res.StatusCode != http.StatusSeeOther || session == "" {
		t.Fatalf("login: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	if code, _, body := get("/admin/", "Cookie", session); code != 200 || !strings.Contains(body, `data-event="show"`) {
		t.Fatalf("the dashboard with the session: %d", code)
	}
	if code, _, _ := get("/admin/v1/events", "Cookie", session); code != http.StatusUnauthorized {
		t.Fatalf("the API with the console's cookie: %d", code)
	}
}
