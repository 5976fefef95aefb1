package proxy

import (
	"strings"
	"testing"
)

// TestLanguageChoice: the switcher's ?lang= picks the page's language
// over Accept-Language and is kept in the wr_lang cookie for the next
// pages; a value that is not a language of the pages changes nothing.
func TestLanguageChoice(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "reader")
	html := []string{"Accept", "text/html", "Accept-Language", "de-DE,de;q=0.9"}
	lang := func(body string) string {
		i := strings.Index(body, "<html lang=\"")
		if i < 0 {
			return ""
		}
		rest := body[i+len("<html lang=\""):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	if got := v.do(t, "GET", r.url+"/show/seats", "", html...); lang(got.body) != "de" {
		t.Fatalf("without a choice: page in %q, want de (the header)", lang(got.body))
	}
	got := v.do(t, "GET", r.url+"/show/seats?lang=fr", "", html...)
	if got.status != 200 || lang(got.body) != "fr" || !strings.Contains(got.body, "Salle d&#39;attente") {
		t.Fatalf("?lang=fr: %d, page in %q", got.status, lang(got.body))
	}
	if c := v.cookie(r.url, "wr_lang"); c != "fr" {
		t.Fatalf("the choice was not kept: wr_lang=%q", c)
	}
	for _, path := range []string{"/show/seats", "/show/seats?lang=xx", "/show/seats?lang=FR-ca"} {
		if got := v.do(t, "GET", r.url+path, "", html...); lang(got.body) != "fr" {
			t.Errorf("%s: page in %q, want fr (the cookie)", path, lang(got.body))
		}
	}
	if got := v.do(t, "GET", r.url+"/_wr/draw/show/0?lang=ar", "", html...); lang(got.body) != "ar" ||
		!strings.Contains(got.body, `<html lang="ar" dir="rtl">`) {
		t.Errorf("draw page ?lang=ar: in %q\n%.200s", lang(got.body), got.body)
	}
	if c := v.cookie(r.url, "wr_lang"); c != "ar" {
		t.Errorf("the draw page's choice was not kept: wr_lang=%q", c)
	}
	// Another browser without the cookie still gets its header's language.
	if got := newVisitor(t, "other").do(t, "GET", r.url+"/show/seats", "", html...); lang(got.body) != "de" {
		t.Errorf("another visitor: page in %q, want de", lang(got.body))
	}
}

// TestNoJSLanguageChoice: the no-JavaScript status page's switcher keeps
// the page's event and return parameters, and its lang picks the page.
func TestNoJSLanguageChoice(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "nojs")
	got := r.formPost(t, v, "event=show&return=%2Fshow%2Fseats")
	status := got.header.Get("Location")
	if got.status != 303 || status == "" {
		t.Fatalf("join: %d %s", got.status, got.body)
	}
	page := v.do(t, "GET", r.url+status, "", "Accept", "text/html", "Accept-Language", "de")
	link := `href="?event=show&amp;return=%2Fshow%2Fseats&amp;lang=sv"`
	if !strings.Contains(page.body, link) {
		t.Fatalf("the switcher lacks %s:\n%s", link, page.body)
	}
	sv := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return=%2Fshow%2Fseats&lang=sv", "", "Accept", "text/html", "Accept-Language", "de")
	if sv.status != 200 || !strings.Contains(sv.body, `<html lang="sv" dir="ltr">`) || !strings.Contains(sv.body, "förkön") {
		t.Fatalf("?lang=sv: %d\n%s", sv.status, sv.body)
	}
	if c := v.cookie(r.url, "wr_lang"); c != "sv" {
		t.Errorf("wr_lang=%q, want sv", c)
	}
}

// A room page chosen by the wr_lang cookie costs no allocation more than
// one chosen by Accept-Language: the choice is a lookup among the
// pre-rendered pages.
func TestLanguageChoiceAllocs(t *testing.T) {
	skipUnderRace(t)
	r := newRig(t)
	allocs := func(head, want string) float64 {
		tmpl := wireRequest(t, "GET /show/seats?x=1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 alloc\r\n"+
			"Accept: text/html\r\nAccept-Language: de-DE,de;q=0.9\r\n"+head)
		ctx := requestCtx(tmpl)
		run := func() {
			tmpl.CopyTo(&ctx.Request)
			ctx.Response.Reset()
			r.p.Handle(ctx)
			if ctx.Response.StatusCode() != 200 || !strings.Contains(string(ctx.Response.Body()), want) {
				t.Fatalf("got %d, want a page with %q", ctx.Response.StatusCode(), want)
			}
		}
		for range 100 {
			run()
		}
		return testing.AllocsPerRun(300, run)
	}
	header := allocs("Cookie: theme=dark\r\n", `<html lang="de"`)
	cookie := allocs("Cookie: theme=dark; wr_lang=ja\r\n", `<html lang="ja"`)
	if cookie > header {
		t.Errorf("a page chosen by the cookie allocates %.2f times, by the header %.2f", cookie, header)
	}
	t.Logf("room page answer: %.2f allocations by the header, %.2f by the cookie", header, cookie)
}
