package static

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// Every language file has exactly the keys of en.json, none empty, each
// text the placeholders of its English one, and no text left in English:
// read from the files, so that a new language file is checked before
// anything uses it. A file may add the plural forms its language has
// beyond one and other (ahead_few in Polish) for a key English has in
// _one and _other.
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
	for _, f := range files {
		lang := strings.TrimSuffix(path.Base(f), ".json")
		t.Run(f, func(t *testing.T) {
			checkLanguage(t, lang, en, read(f))
			if _, ok := languageNames[lang]; !ok {
				t.Errorf("languageNames has no name for %s (the switcher lists it)", lang)
			}
		})
	}
	if len(files) != len(Languages()) {
		t.Errorf("%d files, Languages() has %d", len(files), len(Languages()))
	}
	if len(files) < 12 {
		t.Errorf("%d languages; the pages promise at least 12", len(files))
	}
}

// sameAsEnglish are the texts a language may leave as English has them,
// because English is the right answer there: none so far. Add
// "lang/key" with a reason.
var sameAsEnglish = map[string]string{}

// checkLanguage checks one language's texts against English's.
func checkLanguage(t *testing.T, lang string, en, texts map[string]string) {
	t.Helper()
	placeholders := func(s string) string {
		ph := placeholderRe.FindAllString(s, -1)
		slices.Sort(ph)
		return strings.Join(ph, " ")
	}
	for key, tr := range texts {
		english, ok := en[key]
		if base, variant := pluralVariant(key); !ok && variant {
			english, ok = en[base+"_other"]
			if _, one := en[base+"_one"]; !one {
				ok = false
			}
			if ok && !slices.Contains(pluralCategories(lang), strings.TrimPrefix(key, base+"_")) {
				t.Errorf("%s: %s has no such plural form", key, lang)
			}
		}
		switch {
		case !ok:
			t.Errorf("%s is not a key of en.json (nor a plural form of one)", key)
		case strings.TrimSpace(tr) == "":
			t.Errorf("%s is empty", key)
		case placeholders(tr) != placeholders(english):
			t.Errorf("%s: placeholders [%s], en.json has [%s]", key, placeholders(tr), placeholders(english))
		case lang != fallbackLanguage && tr == english && sameAsEnglish[lang+"/"+key] == "":
			t.Errorf("%s is the English text %q: translate it (or list it in sameAsEnglish with the reason)", key, tr)
		}
	}
	for key := range en {
		if _, ok := texts[key]; !ok {
			t.Errorf("%s is missing", key)
		}
	}
}

// pluralCategories are the plural categories pluralCategory gives in lang
// for 0 to 1000.
func pluralCategories(lang string) []string {
	var cats []string
	for n := int64(0); n <= 1000; n++ {
		if c := pluralCategory(lang, n); !slices.Contains(cats, c) {
			cats = append(cats, c)
		}
	}
	return cats
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
