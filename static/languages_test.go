package static

import (
	"strings"
	"testing"
)

func TestChosen(t *testing.T) {
	for _, c := range []struct {
		query, cookie string
		want          string
		fromQuery     bool
	}{
		{"", "", "", false},
		{"fr", "", "fr", true},
		{"fr", "de", "fr", true},
		{"", "de", "de", false},
		{"xx", "de", "de", false},    // an unknown choice is ignored
		{"FR", "", "", false},        // tags are lower case, as the links write them
		{"fr-FR", "", "", false},     // one tag, not a header
		{"en,de", "ar", "ar", false}, // a list is not a choice
		{"\x00", "\xff", "", false},
	} {
		got, fromQuery := Chosen([]byte(c.query), []byte(c.cookie))
		if string(got) != c.want || fromQuery != c.fromQuery {
			t.Errorf("Chosen(%q, %q) = %q, %v; want %q, %v", c.query, c.cookie, got, fromQuery, c.want, c.fromQuery)
		}
	}
	q, ck := []byte("pl"), []byte("ja")
	if n := testing.AllocsPerRun(100, func() { Chosen(q, ck) }); n != 0 {
		t.Errorf("Chosen allocates %.0f times", n)
	}
}

// A visitor's choice picks the page whatever the header says, and the
// page's switcher links every language, marking its own.
func TestChosenPicksThePage(t *testing.T) {
	p := mustNew(t, summer())
	lang, _ := Chosen([]byte("ar"), nil)
	page := string(p.Room("summer", lang))
	if !strings.Contains(page, `<html lang="ar" dir="rtl">`) {
		t.Fatalf("the chosen page is not Arabic, right to left")
	}
	for _, l := range Languages() {
		link := `<a href="?lang=` + l + `" hreflang="` + l + `" lang="` + l + `"`
		if l == "ar" {
			link += ` aria-current="true"`
		}
		if !strings.Contains(page, link+`>`+LanguageName(l)+`</a>`) {
			t.Errorf("the switcher lacks %s", link)
		}
	}
	if !strings.Contains(page, `<nav class="langs" aria-label="اللغة">`) {
		t.Error("the switcher is not labelled in the page's language")
	}
	if n := testing.AllocsPerRun(100, func() { p.Room("summer", lang) }); n != 0 {
		t.Errorf("Room with a chosen language allocates %.0f times", n)
	}
}

func TestDirection(t *testing.T) {
	for _, l := range Languages() {
		want := "ltr"
		if l == "ar" {
			want = "rtl"
		}
		if got := Direction(l); got != want {
			t.Errorf("Direction(%s) = %s", l, got)
		}
	}
}

// The plural categories are CLDR's (Intl.PluralRules gives the same in
// Chromium; the browser test compares them), and the no-JavaScript page
// picks the form the language file has for each.
func TestPluralForms(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{
		{"en", 0, "other"}, {"en", 1, "one"}, {"en", 2, "other"},
		{"fr", 0, "one"}, {"fr", 1, "one"}, {"fr", 2, "other"}, {"pt", 0, "one"},
		{"ja", 1, "other"}, {"zh", 1, "other"}, {"ko", 1, "other"},
		{"pl", 1, "one"}, {"pl", 2, "few"}, {"pl", 4, "few"}, {"pl", 5, "many"}, {"pl", 12, "many"},
		{"pl", 22, "few"}, {"pl", 112, "many"}, {"pl", 0, "many"},
		{"ar", 0, "zero"}, {"ar", 1, "one"}, {"ar", 2, "two"}, {"ar", 3, "few"}, {"ar", 10, "few"},
		{"ar", 11, "many"}, {"ar", 99, "many"}, {"ar", 100, "other"}, {"ar", 102, "other"}, {"ar", 103, "few"},
	} {
		if got := pluralCategory(c.lang, c.n); got != c.want {
			t.Errorf("pluralCategory(%s, %d) = %s, want %s", c.lang, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{
		{"pl", 1, "Przed Tobą jest 1 osoba"},
		{"pl", 3, "Przed Tobą są 3 osoby"},
		{"pl", 5, "Przed Tobą jest 5 osób"},
		{"pl", 24, "Przed Tobą są 24 osoby"},
		{"ar", 4, "أمامك 4 أشخاص"},
		{"ar", 15, "أمامك 15 شخصًا"},
		{"ar", 100, "أمامك 100 شخص"},
		{"en", 1, "1 person ahead of you"},
		{"en", 7, "7 people ahead of you"},
		{"fr", 1, "1 personne devant vous"},
	} {
		s := &NoJSState{Kind: "waiting", Position: c.n}
		if got := positionText(c.lang, builtinTexts[c.lang], s); got != c.want {
			t.Errorf("%s, %d ahead: %q, want %q", c.lang, c.n, got, c.want)
		}
	}
}

// An operator's text for a plural key shows for every number: the
// language's own further forms of that key give way to it.
func TestPluralOverride(t *testing.T) {
	texts := withOverrides(builtinTexts["pl"], map[string]string{"ahead_one": "Jedna osoba: {n}", "ahead_other": "Osób przed Tobą: {n}"})
	for n, want := range map[int64]string{1: "Jedna osoba: 1", 3: "Osób przed Tobą: 3", 7: "Osób przed Tobą: 7"} {
		if got := positionText("pl", texts, &NoJSState{Kind: "waiting", Position: n}); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
	kept := withOverrides(builtinTexts["pl"], map[string]string{"title": "Sala"})
	if kept["ahead_few"] != builtinTexts["pl"]["ahead_few"] || kept["title"] != "Sala" {
		t.Error("an override of another key dropped a plural form, or did not apply")
	}
	if builtinTexts["pl"]["ahead_few"] == "" {
		t.Error("withOverrides changed the built-in texts")
	}
}

// An event's overrides reach its pages in any language, plural forms
// included, and are checked as the built-in texts are.
func TestOverridesPerLanguage(t *testing.T) {
	p := mustNew(t, PageConfig{Event: "fest", Name: "Fest", Texts: map[string]map[string]string{
		"ar": {"h_waiting": "أنت في طابور المهرجان"},
		"pl": {"ahead_few": "Jeszcze {n} osoby przed Tobą!"},
		"ja": {"dp_title": "フェスの抽選を確認"},
	}})
	for lang, want := range map[string]string{"ar": "أنت في طابور المهرجان", "pl": "Jeszcze {n} osoby przed Tobą!"} {
		if page := string(p.Room("fest", []byte(lang))); !strings.Contains(page, want) {
			t.Errorf("%s room page lacks the override %q", lang, want)
		}
	}
	if page := string(p.Draw("fest", []byte("ja"))); !strings.Contains(page, "フェスの抽選を確認") {
		t.Error("ja draw page lacks the override")
	}
	if page := string(p.Room("fest", []byte("de"))); strings.Contains(page, "Jeszcze") {
		t.Error("a Polish override leaked into German")
	}
	_, err := New([]PageConfig{{Event: "e", Texts: map[string]map[string]string{"ar": {"ahead_few": "أمامك {count} أشخاص"}}}})
	if err == nil || !strings.Contains(err.Error(), "texts.ar.ahead_few") || !strings.Contains(err.Error(), "placeholder {count}") {
		t.Errorf("a plural form's override with a foreign placeholder: %v", err)
	}
}
