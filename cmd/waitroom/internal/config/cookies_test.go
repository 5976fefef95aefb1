package config

import "testing"

// TestCookiesAlwaysSecure: auto means Secure when waitroom terminates TLS
// or the public URL is https.
func TestCookiesAlwaysSecure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		secure    CookieSecure
		tls, url  string
		wantAlway bool
	}{
		{"auto, plain HTTP", SecureAuto, "", "", false},
		{"auto, TLS", SecureAuto, ":443", "", true},
		{"auto, https public URL", SecureAuto, "", "https://tickets.example.com", true},
		{"auto, HTTPS upper case", SecureAuto, "", "HTTPS://tickets.example.com", true},
		{"auto, http public URL", SecureAuto, "", "http://tickets.example.com", false},
		{"always", SecureAlways, "", "", true},
		{"never, even with TLS", SecureNever, ":443", "https://tickets.example.com", false},
	}
	for _, tt := range tests {
		s := defaultServe()
		s.Cookies.Secure, s.TLS.Listen, s.PublicURL = tt.secure, tt.tls, tt.url
		if got := s.CookiesAlwaysSecure(); got != tt.wantAlway {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.wantAlway)
		}
	}
}
