package proxy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// TestNoticeInChromium: a visitor waits on the room page in real
// Chromium; the operator posts a notice through the admin API and the
// page shows it, as text (markup stays visible characters, no element is
// made of it), in the page's language, by the second status answer
// after the change (one poll may be on its way as it is made); a new
// notice replaces it and clearing it hides it the same way.
func TestNoticeInChromium(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.WithAcceptLanguage("de-DE,de;q=0.9"), browsertest.WithPhone())
	browsertest.Navigate(t, tab, r.url+"/show/seats")
	browsertest.WaitFor(t, tab, "the page's first status answer", statusPolls+` >= 1`)
	if browsertest.Eval[bool](t, tab, `!document.getElementById("wr-notice").hidden`) {
		t.Fatal("the notice is shown before any was posted")
	}

	post := func(method, body string) int {
		t.Helper()
		n := browsertest.Eval[int](t, tab, statusPolls)
		if code, got := adminDo(t, method, base+"/admin/v1/events/show/notice", adminToken, body); code != 200 {
			t.Fatalf("%s notice: %d %v", method, code, got)
		}
		return n
	}
	// wait waits until cond holds or two more status answers came; cond
	// must hold by then.
	wait := func(what, cond string, before int) {
		t.Helper()
		browsertest.WaitFor(t, tab, what, "("+cond+") || "+statusPolls+" >= "+strconv.Itoa(before+3))
		if !browsertest.Eval[bool](t, tab, cond) {
			t.Fatalf("%s: not by the second status answer after the change (page shows %q)", what,
				browsertest.Eval[string](t, tab, `document.getElementById("wr-notice").textContent`))
		}
	}

	n := post("PUT", `{"text":"Doors open at <b>10:00</b>.","texts":{"de":"Einlass um <b>10:00</b>.\nAusweis mitbringen.","es":"Abrimos a las 10:00."}}`)
	wait("the German notice", `(function(){var e=document.getElementById("wr-notice");`+
		`return !e.hidden && e.textContent==="Einlass um <b>10:00</b>.\nAusweis mitbringen." && e.children.length===0})()`, n)
	if h := browsertest.Eval[float64](t, tab, `document.getElementById("wr-notice").getBoundingClientRect().height`); h <= 0 {
		t.Fatalf("the notice takes no room on the page (height %v)", h)
	}
	if got := browsertest.Eval[string](t, tab, `document.getElementById("wr-notice").innerText`); !strings.Contains(got, "\n") {
		t.Fatalf("the notice's line break is not kept: %q", got)
	}
	browsertest.Screenshot(t, tab, "notice-de")

	// Without a German text the page falls back to the default one.
	n = post("PUT", `{"text":"Sold out on Saturday.","texts":{"es":"Agotado el sábado."}}`)
	wait("the default text", `document.getElementById("wr-notice").textContent==="Sold out on Saturday."`, n)

	n = post("DELETE", "")
	wait("the notice cleared", `document.getElementById("wr-notice").hidden`, n)
}

// statusPolls counts the status answers the page has had (the join's
// answer is a status too).
const statusPolls = `performance.getEntriesByType("resource").filter(function(e){return /\/_wr\/api\/(status|join)/.test(e.name)}).length`
