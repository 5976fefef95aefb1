package httpc

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url    string
		strict bool
		ok     bool
	}{
		{"https://example.com/hook", true, true},
		{"http://127.0.0.1:8080/x", true, true},
		{"http://[::1]:8080/x", true, true},
		{"http://localhost/x", true, true},
		{"http://example.com/x", true, false},
		{"http://example.com/x", false, true},
		{"", false, false},
		{"example.com/x", false, false},
		{"ftp://example.com/", false, false},
		{"https://", false, false},
		{"https://u:p@example.com/", false, false},
		{"https://example.com/#frag", false, false},
		{"https://exa mple.com/", false, false},
	}
	for _, tc := range tests {
		if got := CheckURL(tc.url, tc.strict) == ""; got != tc.ok {
			t.Errorf("CheckURL(%q, %v) = %q", tc.url, tc.strict, CheckURL(tc.url, tc.strict))
		}
	}
}

func TestReadAll(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadAll at the limit = %q, %v", b, err)
	}
	if _, err := ReadAll(strings.NewReader("123456"), 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadAll over the limit: %v", err)
	}
}

func TestNoRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("redirect followed")
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := NewClient(1).Post(srv.URL, "text/plain", strings.NewReader("secret=x"))
	if err != nil {
		t.Fatal(err)
	}
	Discard(resp.Body, 1<<10)
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("status %d", resp.StatusCode)
	}
}
