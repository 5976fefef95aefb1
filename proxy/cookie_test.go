package proxy

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func parsedHeader(t testing.TB, cookies ...string) *fasthttp.RequestHeader {
	raw := "GET / HTTP/1.1\r\nHost: a\r\n"
	for _, c := range cookies {
		raw += "Cookie: " + c + "\r\n"
	}
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(raw + "\r\n"))); err != nil {
		t.Fatal(err)
	}
	return &h
}

func TestCookie(t *testing.T) {
	cases := []struct {
		name    string
		cookies []string
		want    string
		found   bool
	}{
		{"only", []string{"wr_pass_show=abc.def"}, "abc.def", true},
		{"among others", []string{"theme=dark; wr_pass_show=abc; lang=en"}, "abc", true},
		{"spaces", []string{"theme=dark ;  wr_pass_show = abc ;lang=en"}, "abc", true},
		{"quoted", []string{`wr_pass_show="abc"`}, "abc", true},
		{"first wins", []string{"wr_pass_show=one; wr_pass_show=two"}, "one", true},
		{"second header", []string{"theme=dark", "wr_pass_show=abc"}, "abc", true},
		{"empty value", []string{"wr_pass_show="}, "", true},
		{"prefix of another name", []string{"wr_pass_showx=abc; xwr_pass_show=def"}, "", false},
		{"other case", []string{"WR_PASS_SHOW=abc"}, "", false},
		{"no equals", []string{"wr_pass_show"}, "", false},
		{"value holds equals", []string{"wr_pass_show=a=b"}, "a=b", true},
		{"none", nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cookie(parsedHeader(t, c.cookies...), []byte("wr_pass_show"))
			if string(got) != c.want || (got != nil) != c.found {
				t.Fatalf("got %q (found %v), want %q (found %v)", got, got != nil, c.want, c.found)
			}
		})
	}
}

func TestCookieAllocs(t *testing.T) {
	skipUnderRace(t)
	h := parsedHeader(t, "theme=dark; lang=en; wr_ticket_show=xyz; wr_pass_show=abc.def.ghi")
	name := []byte("wr_pass_show")
	if n := testing.AllocsPerRun(200, func() { _ = cookie(h, name) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// FuzzCookie: for cookies fasthttp itself accepts, cookie finds the same
// value as fasthttp's own parser.
func FuzzCookie(f *testing.F) {
	f.Add("theme=dark; wr_pass_show=abc; lang=en")
	f.Add(`wr_pass_show="q"; x=1`)
	f.Add("wr_pass_show=a; wr_pass_show=b")
	name := []byte("wr_pass_show")
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n\x00\"\t") {
			return // fasthttp decodes quotes and refuses control bytes its own way
		}
		var h fasthttp.RequestHeader
		if h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: a\r\nCookie: "+line+"\r\n\r\n"))) != nil {
			return
		}
		got := cookie(&h, name)
		want := h.CookieBytes(name)
		if want != nil && string(got) != string(want) {
			t.Fatalf("%q: cookie %q, fasthttp %q", line, got, want)
		}
	})
}
