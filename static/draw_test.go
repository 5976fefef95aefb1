package static

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestDrawPage: every event has a draw page per language with its name
// and branding, a script configuration with the draw texts only, and a
// gzipped copy; an unknown event has none.
func TestDrawPage(t *testing.T) {
	p := mustNew(t, summer())
	for _, lang := range Languages() {
		page := p.Draw("summer", []byte(lang))
		title, _ := BuiltinText(lang, "dp_title")
		if !bytes.Contains(page, []byte(`<html lang="`+lang+`" dir="`+Direction(lang)+`">`)) || !bytes.Contains(page, []byte(title)) ||
			!bytes.Contains(page, []byte("Summer Tour 2027")) {
			t.Fatalf("%s draw page:\n%s", lang, page)
		}
		zr, err := gzip.NewReader(bytes.NewReader(p.DrawGzip("summer", []byte(lang))))
		if err != nil {
			t.Fatal(err)
		}
		if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, page) {
			t.Errorf("%s: the gzipped draw page differs", lang)
		}
		m := regexp.MustCompile(`<script type="application/json" id="wr-config">(.*?)</script>`).FindSubmatch(page)
		var c ScriptConfig
		if m == nil || json.Unmarshal(m[1], &c) != nil || c.Event != "summer" || c.Prefix != "/_wr" || len(c.Texts) == 0 {
			t.Fatalf("%s: draw config %s", lang, m)
		}
		for k := range c.Texts {
			if !strings.HasPrefix(k, "dp_") {
				t.Errorf("%s: the draw page carries the text %q", lang, k)
			}
		}
	}
	if p.Draw("nope", nil) != nil || p.DrawGzip("nope", nil) != nil {
		t.Error("a draw page for an unknown event")
	}
	room := string(p.Room("summer", nil))
	if strings.Contains(room, `"dp_title"`) || strings.Contains(room, `"invite_label"`) {
		t.Error("the room page carries texts only the draw page or its own HTML needs")
	}
}

// TestDrawScriptUsesKnownTexts: draw.js asks only for dp_ texts that
// exist (the only ones its configuration has).
func TestDrawScriptUsesKnownTexts(t *testing.T) {
	src, err := webFS.ReadFile("web/draw.js")
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`\bt\("([a-z_]+)"[,)]`).FindAllSubmatch(src, -1)
	if len(used) < 10 {
		t.Fatalf("found only %d t(...) calls in draw.js", len(used))
	}
	for _, m := range used {
		if _, ok := builtinTexts["en"][string(m[1])]; !ok || !strings.HasPrefix(string(m[1]), "dp_") {
			t.Errorf("draw.js uses text %q, which is not a dp_ text", m[1])
		}
	}
}

// TestInvitesConfig: the room script is told about invite codes only for
// an event that takes them.
func TestInvitesConfig(t *testing.T) {
	with := summer()
	with.Invites = true
	p := mustNew(t, with, PageConfig{Event: "plain"})
	if !bytes.Contains(p.Room("summer", nil), []byte(`"invites":true`)) {
		t.Error("the room page of an event with invite lanes does not say so")
	}
	if bytes.Contains(p.Room("plain", nil), []byte(`"invites"`)) {
		t.Error("the room page of an event without invite lanes mentions invites")
	}
}
