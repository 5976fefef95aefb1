package static

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// Every language file has exactly the keys of en.json, none empty, and
// each text the placeholders of its English one: read from the files, so
// that a new language file is checked before anything uses it.
func TestLanguageFilesMatchEnglish(t *testing.T) {
	files, err := fs.Glob(langFS, "lang/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no language files: %v", err)
	}
	read := func(name string) map[string]string {
		src, err := langFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decodeTexts(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	en := read("lang/en.json")
	placeholders := func(s string) string {
		ph := placeholderRe.FindAllString(s, -1)
		slices.Sort(ph)
		return strings.Join(ph, " ")
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			texts := read(f)
			for key := range texts {
				if _, ok := en[key]; !ok {
					t.Errorf("%s is not a key of en.json", key)
				}
			}
			for key, english := range en {
				switch tr, ok := texts[key]; {
				case !ok:
					t.Errorf("%s is missing", key)
				case strings.TrimSpace(tr) == "":
					t.Errorf("%s is empty", key)
				case placeholders(tr) != placeholders(english):
					t.Errorf("%s: placeholders [%s], en.json has [%s]", key, placeholders(tr), placeholders(english))
				}
			}
		})
	}
	if len(files) != len(Languages()) {
		t.Errorf("%d files, Languages() has %d", len(files), len(Languages()))
	}
}

func TestReadLanguages(t *testing.T) {
	en := &fstest.MapFile{Data: []byte(`{"title": "Waiting room", "ahead_one": "{n} person"}`)}
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string // the languages, or the error's text
	}{
		{"order", fstest.MapFS{"lang/fr.json": en, "lang/en.json": en, "lang/de.json": en}, "en,de,fr"},
		{"no english", fstest.MapFS{"lang/de.json": en}, "lang/en.json is missing"},
		{"bad name", fstest.MapFS{"lang/en.json": en, "lang/EN-gb.json": en}, "not a language tag"},
		{"not an object", fstest.MapFS{"lang/en.json": {Data: []byte(`["a"]`)}}, "not a JSON object"},
		{"not a string", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": 1}`)}}, "title:"},
		{"nested", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": {"a": "b"}}`)}}, "title:"},
		{"key twice", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": "a", "title": "b"}`)}}, "title: given twice"},
		{"trailing data", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": "a"} {}`)}}, "data after the object"},
		{"trailing garbage", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": "a"} x`)}}, "data after the object"},
		{"unterminated", fstest.MapFS{"lang/en.json": {Data: []byte(`{"title": "a"`)}}, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			langs, texts, err := readLanguages(tc.files)
			got := strings.Join(langs, ",")
			if err != nil {
				got = err.Error()
			} else if texts["en"]["ahead_one"] != "{n} person" && texts["en"]["title"] == "" {
				t.Errorf("texts not read: %v", texts)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
