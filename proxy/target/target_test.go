package target

import (
	"bytes"
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	strict := Options{}
	loose := Options{EncodedSlashes: true, Semicolons: SemicolonsStrip}
	tests := []struct {
		name string
		raw  string
		o    Options
		uri  string // what the origin receives
		err  error
	}{
		{"root", "/", strict, "/", nil},
		{"plain", "/events/summer", strict, "/events/summer", nil},
		{"trailing slash kept", "/events/", strict, "/events/", nil},
		{"query kept as is", "/a?x=%2F&y=..//", strict, "/a?x=%2F&y=..//", nil},
		{"empty query", "/a?", strict, "/a?", nil},
		{"double slash", "//events/secret", strict, "/events/secret", nil},
		{"many slashes", "/events///secret//", strict, "/events/secret/", nil},
		{"dot", "/events/./secret", strict, "/events/secret", nil},
		{"dot dot", "/static/../events/secret", strict, "/events/secret", nil},
		{"trailing dot dot", "/events/secret/..", strict, "/events/", nil},
		{"trailing dot", "/events/.", strict, "/events/", nil},
		{"encoded dot dot", "/static/%2e%2E/events/secret", strict, "/events/secret", nil},
		{"half encoded dot dot", "/static/.%2e/events", strict, "/events", nil},
		{"unreserved decoded", "/%65vents/%7Euser", strict, "/events/~user", nil},
		{"reserved kept upper", "/a%3fb/%c3%a9", strict, "/a%3Fb/%C3%A9", nil},
		{"encoded percent kept", "/a%25/b", strict, "/a%25/b", nil},
		{"encoded space kept", "/a%20b", strict, "/a%20b", nil},
		{"encoded hash kept", "/a%23b", strict, "/a%23b", nil},
		{"trailing dot segment kept", "/events./secret", strict, "/events./secret", nil},

		{"above root", "/..", strict, "", ErrDotSegment},
		{"above root later", "/a/../../b", strict, "", ErrDotSegment},
		{"encoded above root", "/%2e%2e/x", strict, "", ErrDotSegment},
		{"three dots", "/a/.../b", strict, "", ErrDotSegment},
		{"fragment", "/events/secret#x", strict, "", ErrFragment},
		{"fragment first", "/#/events/secret", strict, "", ErrFragment},
		{"fragment in query", "/a?b#c", strict, "", ErrFragment},
		{"encoded slash", "/events%2Fsecret", strict, "", ErrEncodedSlash},
		{"encoded slash lower", "/events%2fsecret", strict, "", ErrEncodedSlash},
		{"encoded backslash", "/events%5Csecret", strict, "", ErrEncodedSlash},
		{"nul", "/events%00/secret", strict, "", ErrNUL},
		{"backslash", "/static\\..\\events", strict, "", ErrBackslash},
		{"bad escape", "/a%zz", strict, "", ErrEscape},
		{"short escape", "/a%2", strict, "", ErrEscape},
		{"escape at end", "/a%", strict, "", ErrEscape},
		{"semicolon", "/events;x/secret", strict, "", ErrSemicolon},
		{"semicolon dot dot", "/static/..;/events", strict, "", ErrSemicolon},
		{"encoded semicolon", "/events%3Bx/secret", strict, "", ErrSemicolon},
		{"encoded semicolon dot dot", "/static/..%3b/events", strict, "", ErrSemicolon},
		{"encoded semicolon when stripping", "/static/..%3B/events", loose, "", ErrSemicolon},
		{"tab", "/a\tb", strict, "", ErrByte},
		{"space", "/a b", strict, "", ErrByte},
		{"del", "/a\x7f", strict, "", ErrByte},
		{"nul byte", "/a\x00", strict, "", ErrByte},
		{"utf-8", "/caf\xc3\xa9", strict, "", ErrByte},
		{"empty", "", strict, "", ErrEmpty},
		{"relative", "events/secret", strict, "", ErrForm},
		{"authority-form", "example.com:443", strict, "", ErrForm},
		{"other scheme", "ftp://x/events", strict, "", ErrForm},
		{"scheme without slashes", "http:/events", strict, "", ErrForm},

		{"encoded slash allowed", "/a%2fb/c", loose, "/a%2Fb/c", nil},
		{"semicolon stripped", "/events;x/secret;jsessionid=1", loose, "/events/secret", nil},
		{"parameter-only segment", "/;x/events", loose, "/events", nil},
		{"semicolon dot dot stripped", "/static/..;/events/secret", loose, "/events/secret", nil},

		{"absolute", "http://shop.example/events/secret", strict, "/events/secret", nil},
		{"absolute https upper", "HTTPS://Shop.Example:443/a?q", strict, "/a?q", nil},
		{"absolute no path", "http://shop.example", strict, "/", nil},
		{"absolute query only", "http://shop.example?x", strict, "/?x", nil},
		{"absolute fragment", "http://x#/events/secret", strict, "", ErrFragment},
		{"absolute double slash", "http://x//events/secret", strict, "/events/secret", nil},
		{"absolute userinfo", "http://user@x/events", strict, "", ErrAuthority},
		{"absolute empty host", "http:///events", strict, "", ErrAuthority},
		{"asterisk", "*", strict, "*", nil},
		{"asterisk path", "*/x", strict, "", ErrForm},
	}
	var tg Target
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tg.Parse([]byte(tt.raw), tt.o)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Parse(%q) = %v, want %v", tt.raw, err, tt.err)
			}
			if err != nil {
				return
			}
			if got := string(tg.URI()); got != tt.uri {
				t.Fatalf("Parse(%q).URI() = %q, want %q", tt.raw, got, tt.uri)
			}
		})
	}
}

func TestAbsoluteFields(t *testing.T) {
	var tg Target
	if err := tg.Parse([]byte("HTTPS://Shop.Example:8443/%41?x=1"), Options{}); err != nil {
		t.Fatal(err)
	}
	if tg.Form != FormAbsolute || tg.Scheme != "https" || string(tg.Authority) != "shop.example:8443" ||
		string(tg.Path) != "/A" || string(tg.Query) != "x=1" || !tg.HasQuery {
		t.Fatalf("got form %d scheme %q authority %q path %q query %q", tg.Form, tg.Scheme, tg.Authority, tg.Path, tg.Query)
	}
	// URI may move the buffer; Path and Authority stay right.
	for range 3 {
		if string(tg.URI()) != "/A?x=1" || string(tg.Authority) != "shop.example:8443" || string(tg.Path) != "/A" {
			t.Fatalf("after URI: %q %q %q", tg.URI(), tg.Authority, tg.Path)
		}
	}
	if err := tg.Parse([]byte("/b"), Options{}); err != nil || tg.Form != FormOrigin || tg.Authority != nil || tg.Scheme != "" {
		t.Fatalf("reuse: %v %d %q %q", err, tg.Form, tg.Authority, tg.Scheme)
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		path string
		fold bool
		want string
	}{
		{"/Events/Secret", true, "/events/secret"},
		{"/Events/Secret", false, "/Events/Secret"},
		{"/events./secret", true, "/events/secret"},
		{"/events.../x", true, "/events/x"},
		{"/events%20/x", true, "/events/x"},
		{"/events.%20./x/", true, "/events/x/"},
		{"/a%2Fb", true, "/a%2fb"},
		{"/%C5%BFhow/T%C4%B1ckets/%C4%B0/chec%E2%84%AAout", true, "/show/tickets/i/checkout"},
		{"/%c5%bfHOW", true, "/show"},
		{"/%C5%BFhow", false, "/%C5%BFhow"},
		{"/%C5%BE/%E2%84%AB/%C5", true, "/%c5%be/%e2%84%ab/%c5"},
		{"/", true, "/"},
	}
	for _, tt := range tests {
		if got := string(Key(nil, []byte(tt.path), tt.fold)); got != tt.want {
			t.Errorf("Key(%q, %v) = %q, want %q", tt.path, tt.fold, got, tt.want)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in the full run")
	}
	var tg Target
	key := make([]byte, 0, 256)
	raws := [][]byte{
		[]byte("/events/summer/seat-map?section=A&row=12"),
		[]byte("http://shop.example//static/../events/%7esummer/?x"),
		[]byte("/a%2fb"),
	}
	for _, raw := range raws {
		fn := func() {
			if tg.Parse(raw, Options{}) == nil {
				_ = tg.URI()
				key = Key(key[:0], tg.Path, true)
			}
		}
		fn()
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Fatalf("%q: %v allocations per parse", raw, n)
		}
	}
}

// FuzzParse checks what every accepted target satisfies: the path starts
// with "/", has no empty or dot segment, no fragment, no control byte, no
// encoded slash unless allowed, and normalising it again changes nothing
// (the origin parsing what waitroom sends sees what waitroom routed).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/", "//a/../b", "/a%2e%2E/b", "http://h/a?b", "/a;b/c", "/a%2Fb", "*", "/a/./b/"} {
		f.Add([]byte(s), false, false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, slashes, strip bool) {
		o := Options{EncodedSlashes: slashes}
		if strip {
			o.Semicolons = SemicolonsStrip
		}
		var tg Target
		if tg.Parse(raw, o) != nil || tg.Form == FormAsterisk {
			return
		}
		p := append([]byte(nil), tg.Path...)
		if len(p) == 0 || p[0] != '/' || bytes.Contains(p, []byte("//")) {
			t.Fatalf("%q: path %q", raw, p)
		}
		for _, seg := range bytes.Split(p[1:], []byte("/")) {
			if dots(seg) > 0 {
				t.Fatalf("%q: dot segment in %q", raw, p)
			}
		}
		if bytes.ContainsAny(p, "#;\\?") || (!slashes && tg.EncodedSlash) {
			t.Fatalf("%q: path %q", raw, p)
		}
		uri := append([]byte(nil), tg.URI()...)
		var again Target
		if err := again.Parse(uri, o); err != nil {
			t.Fatalf("%q: normalised %q does not parse: %v", raw, uri, err)
		}
		if !bytes.Equal(again.URI(), uri) {
			t.Fatalf("%q: normalised %q normalises to %q", raw, uri, again.URI())
		}
	})
}

func TestNormalised(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{"/events/secret", true},
		{"/events/secret?x=/../y", true},
		{"/events/", true},
		{"/EVENTS/Secret", true},
		{"/a%20b", true},
		{"/a%C3%A9", true},
		{"http://h/events/x", true},
		{"//events/secret", false},
		{"/events//secret", false},
		{"/static/../events", false},
		{"/./events", false},
		{"/%65vents", false},
		{"/a%c3%a9", false},
		{"http://h", false},
		{"*", false},
	} {
		var tg Target
		if err := tg.Parse([]byte(c.raw), Options{}); err != nil {
			t.Fatalf("%q: %v", c.raw, err)
		}
		if got := tg.Normalised(); got != c.want {
			t.Errorf("%q: Normalised = %v, want %v", c.raw, got, c.want)
		}
	}
	var tg Target
	if err := tg.Parse([]byte("/a;x/b"), Options{Semicolons: SemicolonsStrip}); err != nil || tg.Normalised() {
		t.Fatalf("a stripped path parameter: %v, normalised %v", err, tg.Normalised())
	}
}
