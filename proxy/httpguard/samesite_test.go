package httpguard

import (
	"strings"
	"testing"
)

func TestSameSitePath(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"/", true},
		{"/events/summer", true},
		{"/a/b?x=1&y=%2F", true},
		{"/a?next=//evil.example", true}, // in the query, "//" is data
		{"/a/%2F%2Fb", true},             // "//" inside the path is not at its start
		{"/caf%C3%A9", true},
		{"/a//b", true},
		{"", false},
		{"events", false},
		{"//evil.example", false},
		{"//evil.example/path", false},
		{"/\\evil.example", false},
		{"/a\\b", false},
		{"https://evil.example", false},
		{"javascript:alert(1)", false},
		{"/%2F%2Fevil.example", false},
		{"/%2fevil.example", false},
		{"/%5Cevil.example", false},
		{"/a%5Cb", false},
		{"/a%0d%0aSet-Cookie:x", false},
		{"/a\r\nSet-Cookie:x", false},
		{"/a b", false},
		{"/a#frag", false},
		{"/caf\xc3\xa9", false},
		{"/a%", false},
		{"/a%2", false},
		{"/a%zz", false},
		{"/a?%00", false},
		{"/" + strings.Repeat("a", MaxReturnPath), false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := SameSitePath([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && string(got) != tt.in {
				t.Fatalf("path = %q", got)
			}
		})
	}
}
