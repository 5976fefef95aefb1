package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// TestAdminNotice: a notice set through the admin API is in the answer,
// in the next status poll of a visitor of the event (and not of another
// event), with its translations; clearing it removes it; malformed
// bodies are 400, invalid notices 422 with every problem listed, and
// change nothing.
func TestAdminNotice(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	v := newVisitor(t, "Mozilla/5.0 notice")
	st := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	if st.Notice != nil {
		t.Fatalf("a notice before any was posted: %+v", st.Notice)
	}
	path := base + "/admin/v1/events/show/notice"
	body := `{"text":"Doors open at 10:00 <b>sharp</b>\nBring ID.","texts":{"de":"Einlass um 10:00","es":"Abrimos a las 10:00"}}`
	code, got := adminDo(t, "PUT", path, adminToken, body)
	n, _ := got["notice"].(map[string]any)
	if code != 200 || n["text"] != "Doors open at 10:00 <b>sharp</b>\nBring ID." || n["texts"].(map[string]any)["de"] != "Einlass um 10:00" {
		t.Fatalf("PUT notice: %d %v", code, got)
	}
	st = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	if st.Notice == nil || st.Notice.Text != "Doors open at 10:00 <b>sharp</b>\nBring ID." ||
		st.Notice.Texts["es"] != "Abrimos a las 10:00" || len(st.Notice.Texts) != 2 {
		t.Fatalf("status after the notice: %+v", st.Notice)
	}
	// Markup is data: escaped in the JSON like any text.
	raw := v.do(t, "GET", r.url+"/_wr/api/status?event=show", "").body
	if strings.Contains(raw, "<b>") || !strings.Contains(raw, `\u003cb\u003esharp`) {
		t.Fatalf("status JSON carries the notice's markup unescaped: %s", raw)
	}
	other := newVisitor(t, "Mozilla/5.0 other")
	if st := decodeStatus(t, other.do(t, "POST", r.url+"/_wr/api/join", `{"event":"other"}`)); st.Notice != nil {
		t.Fatalf("another event's status shows the notice: %+v", st.Notice)
	}
	// It survives ticks (which read the control back from the store).
	r.tick(t, 0)
	if st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")); st.Notice == nil || st.Notice.Texts["de"] != "Einlass um 10:00" {
		t.Fatalf("status after a tick: %+v", st.Notice)
	}

	// Malformed: 400, nothing changes.
	for _, bad := range []string{`{}`, `{"texts":{"de":"x"}}`, `{"text":1}`, `{"text":"a","x":1}`, `{"text":"a","texts":["de"]}`,
		`{"text":"a","texts":{"de":1}}`, `{"text":"a","text":"b"}`, `{"text":"a"} {}`, `[]`, `{"text":"a","texts":{"de":"x","de":"y"}}`} {
		if code, e := adminDo(t, "PUT", path, adminToken, bad); code != 400 || e["error"] != "bad_request" {
			t.Errorf("PUT %s: %d %v", bad, code, e)
		}
	}
	// Invalid: 422 with every problem.
	code, e := adminDo(t, "PUT", path, adminToken, `{"text":"","texts":{"d":"x","de":"`+strings.Repeat("x", admission.MaxNoticeRunes+1)+`","es":"a\u0007"}}`)
	problems, _ := e["problems"].([]any)
	if code != 422 || e["error"] != "invalid_notice" || len(problems) != 4 {
		t.Fatalf("invalid notice: %d %v", code, e)
	}
	for i, want := range []string{"text: must not be empty", `texts: "d" is not a language tag`, "texts.de: must be at most 500 characters", "texts.es: must not hold control"} {
		if s, _ := problems[i].(string); !strings.HasPrefix(s, want) {
			t.Errorf("problem %d: %q, want %q", i, s, want)
		}
	}
	if st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")); st.Notice == nil || st.Notice.Texts["de"] != "Einlass um 10:00" {
		t.Fatalf("a refused notice changed the status: %+v", st.Notice)
	}
	if code, _ := adminDo(t, "PUT", base+"/admin/v1/events/nope/notice", adminToken, `{"text":"x"}`); code != 404 {
		t.Fatalf("notice of an unknown event: %d", code)
	}

	// Replace, then clear.
	if code, got := adminDo(t, "PUT", path, adminToken, `{"text":"Second"}`); code != 200 || got["notice"].(map[string]any)["texts"] != nil {
		t.Fatalf("replace: %d %v", code, got)
	}
	if st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")); st.Notice == nil || st.Notice.Text != "Second" || st.Notice.Texts != nil {
		t.Fatalf("status after replacing: %+v", st.Notice)
	}
	if code, got := adminDo(t, "DELETE", path, adminToken, ""); code != 200 || got["notice"] != nil {
		t.Fatalf("DELETE notice: %d %v", code, got)
	}
	r.tick(t, time.Second)
	if st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")); st.Notice != nil {
		t.Fatalf("status after clearing: %+v", st.Notice)
	}
}

// TestStatusNoticeAllocs: with a notice set, a status poll still
// allocates nothing once its JSON was made (made once per notice, not
// per poll).
func TestStatusNoticeAllocs(t *testing.T) {
	r := newRig(t)
	if _, err := r.engine.UpdateControl(context.Background(), "show", func(c *admission.Control) {
		c.Notice = &admission.Notice{Text: "Hello", Texts: map[string]string{"de": "Hallo"}}
	}); err != nil {
		t.Fatal(err)
	}
	ev := r.p.events["show"]
	first := ev.noticeFragment()
	if string(first) != `{"text":"Hello","texts":{"de":"Hallo"}}` {
		t.Fatalf("fragment %s", first)
	}
	if n := testing.AllocsPerRun(100, func() { ev.noticeFragment() }); n != 0 {
		t.Fatalf("noticeFragment allocates %v per poll", n)
	}
	r.tick(t, 0) // the tick reads the same notice back: same fragment
	if again := ev.noticeFragment(); &again[0] != &first[0] {
		t.Fatal("a tick that did not change the notice made its JSON again")
	}
}
