package static

import "strings"

// languageNames are the languages' names in themselves (autonyms), as the
// language switcher lists them: a visitor who cannot read the page's
// language still finds their own. A test checks every file under lang/
// has one.
var languageNames = map[string]string{
	"ar": "العربية",
	"de": "Deutsch",
	"en": "English",
	"es": "Español",
	"fr": "Français",
	"it": "Italiano",
	"ja": "日本語",
	"ko": "한국어",
	"nl": "Nederlands",
	"pl": "Polski",
	"pt": "Português",
	"sv": "Svenska",
	"tr": "Türkçe",
	"zh": "中文",
}

// rtlLanguages are the languages written right to left: their pages get
// dir="rtl" on <html>, and the stylesheet's logical properties mirror
// the layout.
var rtlLanguages = map[string]bool{"ar": true, "fa": true, "he": true, "ur": true}

// LanguageName returns lang's name in itself ("Deutsch"), or lang when
// there is none.
func LanguageName(lang string) string {
	if n, ok := languageNames[lang]; ok {
		return n
	}
	return lang
}

// Direction returns the writing direction of lang: "rtl" or "ltr", the
// value of the dir attribute of its pages.
func Direction(lang string) string {
	if rtlLanguages[lang] {
		return "rtl"
	}
	return "ltr"
}

// LangQuery is the query parameter that picks a page's language
// (?lang=fr), as the language switcher's links set it; LangCookie the
// cookie that keeps the choice (the proxy sets it from the parameter).
// Both beat Accept-Language; a value that is not one of Languages() is
// ignored.
const (
	LangQuery  = "lang"
	LangCookie = "wr_lang"
)

// LangLink is one entry of the language switcher (TemplateData.Langs).
type LangLink struct {
	// Tag is the language ("fr"), for hreflang and lang attributes.
	Tag string
	// Name is the language's name in itself ("Français").
	Name string
	// Href is the link: "?lang=fr", the same page in that language.
	Href string
	// Current is the page's own language (aria-current).
	Current bool
}

// langLinks is the switcher of a page in lang: every language, in the
// order of Languages.
func langLinks(lang string) []LangLink {
	links := make([]LangLink, len(languages))
	for i, l := range languages {
		links[i] = LangLink{Tag: l, Name: LanguageName(l), Href: "?" + LangQuery + "=" + l, Current: l == lang}
	}
	return links
}

// languageRanges are the languages as bytes, indexed like languages:
// what Chosen returns.
var languageRanges = func() [][]byte {
	r := make([][]byte, len(languages))
	for i, l := range languages {
		r[i] = []byte(l)
	}
	return r
}()

// Chosen returns the language a visitor chose, as an Accept-Language
// value that names only it ("fr"), for the page methods: the lang query
// value when it names one of Languages(), else the cookie's; nil when
// neither does (then the Accept-Language header decides). fromQuery says
// the query chose it, so that the server keeps the choice in LangCookie.
// The slice is shared and must not be modified; Chosen does not allocate.
func Chosen(query, cookie []byte) (lang []byte, fromQuery bool) {
	for i, v := range [2][]byte{query, cookie} {
		if len(v) == 0 || len(v) > 3 {
			continue
		}
		for _, l := range languageRanges {
			if string(v) == string(l) {
				return l, i == 0
			}
		}
	}
	return nil, false
}

// pluralCategory is the CLDR plural category of the whole number n in
// lang ("one", "two", "few", "many", "zero" or "other"), as
// Intl.PluralRules gives it to the page script, for the languages under
// lang/ (integers only: the pages count people, minutes, hours, days).
func pluralCategory(lang string, n int64) string {
	if n < 0 {
		n = -n
	}
	switch lang {
	case "ja", "ko", "zh":
		return "other"
	case "fr", "pt":
		if n <= 1 {
			return "one"
		}
	case "pl":
		switch m10, m100 := n%10, n%100; {
		case n == 1:
			return "one"
		case m10 >= 2 && m10 <= 4 && (m100 < 12 || m100 > 14):
			return "few"
		default:
			return "many"
		}
	case "ar":
		switch m100 := n % 100; {
		case n == 0:
			return "zero"
		case n == 1:
			return "one"
		case n == 2:
			return "two"
		case m100 >= 3 && m100 <= 10:
			return "few"
		case m100 >= 11:
			return "many"
		}
	default:
		if n == 1 {
			return "one"
		}
	}
	return "other"
}

// pluralForms are the plural categories a language file may give besides
// _one and _other, as key_<category> for a key whose English text has
// _one and _other forms (ahead_few in Polish).
var pluralForms = []string{"zero", "two", "few", "many"}

// pluralVariant reports whether key is base_<category> for one of
// pluralForms, and returns base.
func pluralVariant(key string) (base string, ok bool) {
	for _, f := range pluralForms {
		if b, cut := strings.CutSuffix(key, "_"+f); cut {
			return b, true
		}
	}
	return "", false
}
