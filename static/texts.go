package static

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// langFS holds the page texts, one file per language: lang/<tag>.json,
// where <tag> is a BCP 47 primary language tag ("en", "de"). Adding a
// language is adding a file with every key of lang/en.json (a test checks
// the keys and their placeholders).
//
//go:embed lang/*.json
var langFS embed.FS

// fallbackLanguage is the language every other one is checked against
// and the pages fall back to: it comes first in Languages.
const fallbackLanguage = "en"

// languages are the languages the pages come in, in the order Languages
// returns them; builtinTexts are their texts. The keys are the same in
// every language (a test checks it, with the placeholders). Keys starting
// with busy_, blocked_, down_, nojs_, og_, dp_ and maintenance_ are for
// the busy, blocked, origin-down, no-script, draw and maintenance pages
// and the page's head, session_ for the session banner script
// (SessionScript); title and noscript are written into the HTML; the
// rest go to the page script.
//
// Placeholders: {n} a number, {low} and {high} the ends of a range,
// {time} a local clock time.
var languages, builtinTexts = mustReadLanguages(langFS)

// Languages returns the languages the waiting-room pages come in (BCP 47
// primary tags, one per file under lang/): English ("en") first, then the
// others in alphabetical order. The slice is a fresh copy.
func Languages() []string { return slices.Clone(languages) }

// languageIndex returns the position of lang in languages, or -1.
func languageIndex(lang string) int { return slices.Index(languages, lang) }

// TextKeys returns every text key a PageConfig's Texts may override, in
// sorted order. Each key's English text shows what it is for; a text is
// plain text (never HTML) and keeps the {placeholders} of the built-in
// one.
func TextKeys() []string {
	keys := make([]string, 0, len(builtinTexts[fallbackLanguage]))
	for k := range builtinTexts[fallbackLanguage] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BuiltinText returns the built-in text of key in lang, and whether
// there is one.
func BuiltinText(lang, key string) (string, bool) {
	s, ok := builtinTexts[lang][key]
	return s, ok
}

// placeholderRe finds the {name} placeholders the page script fills in.
var placeholderRe = regexp.MustCompile(`\{[a-z]+\}`)

// langTagRe is a file name's language tag: a BCP 47 primary language
// subtag, lower case, as Accept-Language negotiation compares them.
var langTagRe = regexp.MustCompile(`^[a-z]{2,3}$`)

// mustReadLanguages is readLanguages of the embedded files, which are
// part of the program: a broken one is a programming error.
func mustReadLanguages(fsys fs.FS) ([]string, map[string]map[string]string) {
	langs, texts, err := readLanguages(fsys)
	if err != nil {
		panic(err)
	}
	return langs, texts
}

// readLanguages reads lang/*.json of fsys: each a JSON object of text key
// to text, named for its language. It returns the languages, the fallback
// first, and their texts. Keys are not compared across files here (the
// tests do that); a file that is not a flat object of strings, that repeats
// a key, or whose name is not a language tag is an error.
func readLanguages(fsys fs.FS) ([]string, map[string]map[string]string, error) {
	files, err := fs.Glob(fsys, "lang/*.json")
	if err != nil {
		return nil, nil, err
	}
	var langs []string
	texts := make(map[string]map[string]string, len(files))
	for _, f := range files {
		lang := strings.TrimSuffix(path.Base(f), ".json")
		if !langTagRe.MatchString(lang) {
			return nil, nil, fmt.Errorf("static: %s: the name is not a language tag such as en.json", f)
		}
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, nil, err
		}
		m, err := decodeTexts(src)
		if err != nil {
			return nil, nil, fmt.Errorf("static: %s: %w", f, err)
		}
		langs = append(langs, lang)
		texts[lang] = m
	}
	if texts[fallbackLanguage] == nil {
		return nil, nil, fmt.Errorf("static: lang/%s.json is missing", fallbackLanguage)
	}
	slices.SortFunc(langs, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == fallbackLanguage:
			return -1
		case b == fallbackLanguage:
			return 1
		}
		return strings.Compare(a, b)
	})
	return langs, texts, nil
}

// decodeTexts decodes one language file: an object whose values are
// strings, no key twice, nothing after it.
func decodeTexts(src []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object of text key to text")
	}
	m := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // an object's keys are strings
		var text string
		if err := dec.Decode(&text); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("%s: given twice", key)
		}
		m[key] = text
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the object")
	}
	return m, nil
}
