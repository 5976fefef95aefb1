package static_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

// phoneWidth is the narrow phone the pages must fit: 360 CSS pixels.
const phoneWidth = 360

// overflowJS lists what does not fit the viewport's width: the document
// wider than the viewport, a box whose content is wider than the box
// (scrollWidth > clientWidth), or an element with text of its own that
// reaches past either edge. Hidden elements do not count.
const overflowJS = `(function(){
  var W = window.innerWidth, out = [], de = document.documentElement;
  if (de.scrollWidth > W) out.push("document scrollWidth " + de.scrollWidth + " > " + W);
  var all = document.body.querySelectorAll("*");
  for (var i = 0; i < all.length; i++) {
    var e = all[i];
    if (e.closest("[hidden],noscript,script,style,.visually-hidden")) continue;
    var cs = getComputedStyle(e);
    if (cs.display === "none" || cs.visibility === "hidden") continue;
    var own = /^(INPUT|BUTTON|IMG)$/.test(e.tagName);
    for (var c = e.firstChild; c; c = c.nextSibling) if (c.nodeType === 3 && c.textContent.trim()) own = true;
    var name = e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "");
    if (cs.display !== "inline" && e.scrollWidth > e.clientWidth + 1 && cs.overflowX !== "visible")
      out.push(name + " scrollWidth " + e.scrollWidth + " > clientWidth " + e.clientWidth);
    if (!own) continue;
    if (cs.display !== "inline" && e.scrollWidth > e.clientWidth + 1)
      out.push(name + " text scrollWidth " + e.scrollWidth + " > clientWidth " + e.clientWidth);
    var r = e.getBoundingClientRect();
    if (r.left < -0.5 || r.right > W + 0.5) out.push(name + " spans " + Math.round(r.left) + " to " + Math.round(r.right) + " of " + W);
  }
  return out;
})()`

// textEdges is the left and right edge of the text of the element
// matching sel (a Range over its contents, so a full-width block's text
// is measured, not the block).
func textEdges(sel string) string {
	return `(function(){var e=document.querySelector(` + js(sel) + `);if(!e)return [-1,-1];var r=document.createRange();r.selectNodeContents(e);var b=r.getBoundingClientRect();return [b.left,b.right]})()`
}

// TestLanguagesInChromium renders the waiting-room page and the draw page
// in every language on a 360-pixel-wide phone: nothing overflows, the
// Arabic pages are mirrored (dir=rtl, text and the switcher at the right
// where they are at the left in English), the switcher's links pick the
// language and keep the page's query, and they work from the keyboard.
// Chromium's number formats and plural rules, which the page scripts use,
// are the ones the no-JavaScript page reproduces in Go. A screenshot per
// language and page goes to the artifacts directory.
func TestLanguagesInChromium(t *testing.T) {
	pages, err := static.New([]static.PageConfig{{Event: event, Name: "Summer Tour 2027", JoinPath: "/events/summer", Invites: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"ja", "ko", "zh-cn", "ar"} {
		// Without a font, Chromium draws boxes whose widths say nothing
		// about the real text's.
		if out, err := exec.Command("fc-list", ":lang="+l).Output(); err != nil || len(bytes.TrimSpace(out)) == 0 {
			t.Fatalf("no font for %s (fc-list :lang=%s: %v): run make deps (fonts-noto-cjk)", l, l, err)
		}
	}
	b := browsertest.Start(t)
	now := time.Now()
	api := newScriptedAPI(t, pages, apiState{
		Status: "waiting", Position: 12345, Display: "exact", ETA: 2400, Low: 1800, High: 3000, Refresh: 30,
		OnSaleAt: now.Add(-time.Minute), Tranche: 3,
	})
	drawSrv := newDrawServer(t, pages)
	ctx := b.NewTab(t, browsertest.WithPhoneSize(phoneWidth, 740))

	type edges struct{ headline, link [2]float64 }
	var ltr edges
	for _, lang := range static.Languages() {
		t.Run(lang, func(t *testing.T) {
			browsertest.Navigate(t, ctx, api.url("/events/summer?seat=A1&lang="+lang))
			browsertest.WaitFor(t, ctx, "the position", text("wr-position")+` !== "" && `+text("wr-eta-value")+` !== ""`)
			if got := browsertest.Eval[string](t, ctx, `document.documentElement.lang`); got != lang {
				t.Fatalf("page in %q, want %q", got, lang)
			}
			want := static.FormatInt(lang, 12345)
			if pos := browsertest.Eval[string](t, ctx, text("wr-position")); !strings.Contains(pos, want) {
				t.Errorf("position %q lacks the number %q", pos, want)
			}
			// The lang parameter did its work: gone from the address and the
			// way back; the switcher keeps the rest of the query.
			if s := browsertest.Eval[string](t, ctx, `location.search`); s != "?seat=A1" {
				t.Errorf("address query %q after the switch, want ?seat=A1", s)
			}
			if h := browsertest.Eval[string](t, ctx, `document.querySelector(".langs a[hreflang=de]").getAttribute("href")`); h != "?seat=A1&lang=de" {
				t.Errorf("switcher link %q, want ?seat=A1&lang=de", h)
			}
			if cur := browsertest.Eval[string](t, ctx, `document.querySelector(".langs a[aria-current]").getAttribute("hreflang")`); cur != lang {
				t.Errorf("the switcher marks %q as current", cur)
			}
			if lang == "en" {
				// The check finds what does not fit: a word too long for the
				// line, not allowed to break.
				browsertest.Eval[bool](t, ctx, `(function(){var p=document.createElement("p");p.id="wr-test-wide";p.style.overflowWrap="normal";p.textContent="Warteschlangenvorverkaufseinladungscodeüberprüfung";document.querySelector("main").append(p);return true})()`)
				if found := browsertest.Eval[[]string](t, ctx, overflowJS); !slices.ContainsFunc(found, func(s string) bool { return strings.Contains(s, "wr-test-wide") }) {
					t.Fatalf("the overflow check misses a word wider than the screen: %v", found)
				}
				browsertest.Eval[bool](t, ctx, `(document.getElementById("wr-test-wide").remove(), true)`)
			}
			checkFits(t, ctx, "room")
			dir := browsertest.Eval[string](t, ctx, `document.dir`)
			mainDir := browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector("main")).direction`)
			e := edges{headline: browsertest.Eval[[2]float64](t, ctx, textEdges("#wr-headline")),
				link: browsertest.Eval[[2]float64](t, ctx, textEdges(".langs li:first-child a"))}
			if static.Direction(lang) == "rtl" {
				if dir != "rtl" || mainDir != "rtl" {
					t.Errorf("document dir %q, main direction %q; want rtl", dir, mainDir)
				}
				// What sits at the left in English sits at the right here.
				for _, x := range []struct {
					what      string
					ltr, here [2]float64
				}{{"headline", ltr.headline, e.headline}, {"first language link", ltr.link, e.link}} {
					if !(x.ltr[0] < phoneWidth/2 && x.here[1] > phoneWidth/2 && x.here[1] > phoneWidth-x.ltr[0]-2) {
						t.Errorf("%s spans %.0f to %.0f; in English %.0f to %.0f: not mirrored", x.what, x.here[0], x.here[1], x.ltr[0], x.ltr[1])
					}
				}
			} else if dir != "ltr" || mainDir != "ltr" {
				t.Errorf("document dir %q, main direction %q; want ltr", dir, mainDir)
			}
			if lang == "en" {
				ltr = e
			}
			browsertest.Screenshot(t, ctx, "room-"+lang)

			browsertest.Navigate(t, ctx, drawSrv.URL+"/_wr/draw/summer/3?lang="+lang)
			browsertest.WaitFor(t, ctx, "the seed checked", `document.getElementById("dp-seed-check").textContent !== "" && !document.getElementById("dp-find").hidden`)
			if got := browsertest.Eval[string](t, ctx, `document.documentElement.lang + " " + document.dir`); got != lang+" "+static.Direction(lang) {
				t.Errorf("draw page is %q", got)
			}
			if ok, _ := static.BuiltinText(lang, "dp_seed_ok"); browsertest.Eval[string](t, ctx, `document.getElementById("dp-seed-check").textContent`) != ok {
				t.Errorf("the seed did not check out")
			}
			if d := browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("dp-seed-value")).direction`); d != "ltr" {
				t.Errorf("the seed reads %s; hex must read left to right in every language", d)
			}
			checkFits(t, ctx, "draw")
			browsertest.Screenshot(t, ctx, "draw-"+lang)
		})
	}

	t.Run("keyboard", func(t *testing.T) {
		browsertest.Navigate(t, ctx, api.url("/events/summer?lang=en"))
		browsertest.WaitFor(t, ctx, "the position", text("wr-position")+` !== ""`)
		// Tab from the last focusable element before the switcher reaches
		// its links; Enter on one opens the page in that language.
		browsertest.Eval[bool](t, ctx, `(function(){var a=document.querySelector(".langs a[hreflang=ja]");a.focus();return document.activeElement===a})()`)
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, "the Japanese page", `document.documentElement.lang === "ja" && `+text("wr-position")+` !== ""`)
		// The choice is kept: the page without ?lang stays Japanese.
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		browsertest.WaitFor(t, ctx, "the page", text("wr-position")+` !== ""`)
		if got := browsertest.Eval[string](t, ctx, `document.documentElement.lang`); got != "ja" {
			t.Errorf("after the switch a plain load is in %q, want ja (the cookie)", got)
		}
	})

	t.Run("intl", func(t *testing.T) {
		nums := []int64{0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 25, 100, 101, 102, 111, 112, 999, 1234, 12345, 123456, 1234567}
		numsJSON, _ := json.Marshal(nums)
		type got struct {
			Format []string `json:"format"`
			Plural []string `json:"plural"`
		}
		res := browsertest.Eval[map[string]got](t, ctx, `(function(){var o={};`+string(mustJSON(static.Languages()))+`.forEach(function(l){
			var f=new Intl.NumberFormat(l),p=new Intl.PluralRules(l);
			o[l]={format:`+string(numsJSON)+`.map(function(n){return f.format(n)}),plural:`+string(numsJSON)+`.map(function(n){return p.select(n)})}});return o})()`)
		for _, lang := range static.Languages() {
			for i, n := range nums {
				if g, w := res[lang].Format[i], static.FormatInt(lang, n); g != w {
					t.Errorf("%s %d: Chromium writes %q, formatInt %q", lang, n, g, w)
				}
				if g, w := res[lang].Plural[i], static.PluralCategory(lang, n); g != w && !(g == "many" && w == "other" && !slices.Contains([]string{"pl", "ar"}, lang)) {
					// fr, it, pt, es have "many" for millions (1000000 is "de
					// personnes"); no built-in text has that form.
					t.Errorf("%s %d: Chromium's plural is %s, pluralCategory %s", lang, n, g, w)
				}
			}
		}
	})
}

// checkFits fails t for everything overflowJS finds.
func checkFits(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	if w := browsertest.Eval[int](t, ctx, `window.innerWidth`); w != phoneWidth {
		t.Fatalf("viewport %d px wide, want %d", w, phoneWidth)
	}
	for _, p := range browsertest.Eval[[]string](t, ctx, overflowJS) {
		t.Errorf("%s page: %s", page, p)
	}
}

// newDrawServer serves the draw page of tranche 3 of event and its audit:
// a real draw (the seed's SHA-256 is the commitment, the entries sorted
// by HMAC with the seed), so that the page checks it and shows every
// section.
func newDrawServer(t *testing.T, pages *static.Pages) *httptest.Server {
	seed := sha256.Sum256([]byte("the seed of tranche 3"))
	commit := sha256.Sum256(seed[:])
	var hashes []string
	for i := range 40 {
		h := sha256.Sum256([]byte(fmt.Sprint("visitor-", i)))
		hashes = append(hashes, hex.EncodeToString(h[:]))
	}
	key := func(h string) string {
		b, _ := hex.DecodeString(h)
		m := hmac.New(sha256.New, seed[:])
		m.Write(b)
		return string(m.Sum(nil))
	}
	slices.SortFunc(hashes, func(a, b string) int { return strings.Compare(key(a), key(b)) })
	opens := time.Now().Add(-time.Hour).UTC()
	audit := map[string]any{
		"event": event, "lane": "public", "tranche": 3, "opens_at": opens.Format(time.RFC3339),
		"closes_at": opens.Add(3 * time.Second).Format(time.RFC3339), "committed_from": opens.Format(time.RFC3339),
		"commitment": hex.EncodeToString(commit[:]), "drawn": true, "drawn_at": opens.Add(4 * time.Second).Format(time.RFC3339),
		"seed": hex.EncodeToString(seed[:]), "first": 1201, "count": len(hashes), "offset": 0, "hashes": hashes,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_wr/draw/{event}/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", static.ContentTypeHTML)
		w.Header().Set("Content-Security-Policy", pages.CSP())
		w.Write(pages.Draw(event, pageLanguage(w, r)))
	})
	mux.HandleFunc("GET /_wr/api/draws/{event}/{n}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, audit)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
