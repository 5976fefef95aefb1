package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// TestDownPage: the page for an origin that does not answer comes in
// every language with the site's branding, says it is not the visitor's
// fault, and retries by itself after DownRetrySeconds (jittered by its
// script, with a meta refresh for browsers without scripts).
func TestDownPage(t *testing.T) {
	p := mustNew(t, PageConfig{Event: "summer", Name: "Summer", Colors: Colors{Accent: "#800000"}})
	for _, lang := range Languages() {
		page := string(p.Down([]byte(lang)))
		for _, want := range []string{`<html lang="` + lang + `" dir="` + Direction(lang) + `">`, builtinTexts[lang]["down_title"],
			builtinTexts[lang]["down_retry"], `<meta http-equiv="refresh" content="20">`, `data-retry="10"`,
			"--wr-accent:#800000", "location.replace"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s down page lacks %q:\n%s", lang, want, page)
			}
		}
		if strings.Contains(page, "Summer") || strings.Contains(page, builtinTexts[lang]["busy_title"]) {
			t.Errorf("%s down page names an event or reads as the busy page", lang)
		}
		zr, err := gzip.NewReader(bytes.NewReader(p.DownGzip([]byte(lang))))
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := io.ReadAll(zr); string(raw) != page {
			t.Errorf("%s: DownGzip is not Down compressed", lang)
		}
	}
	// The busy page keeps its own, shorter retry.
	if !strings.Contains(string(p.Busy(nil)), `data-retry="5"`) {
		t.Error("the busy page's retry changed")
	}
	if !strings.Contains(string(mustNew(t).Down(nil)), "Try again now") {
		t.Error("without events, Down must still work")
	}
	if got := p.Room("summer", []byte("en")); strings.Contains(string(got), "down_title") {
		t.Error("the room script's texts carry the down page's")
	}
}
