package admission

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Notice is an operator's message to an event's visitors: plain text
// (never markup), with translations by language tag. A page shows the
// text of its own language when the notice has one, else Text.
type Notice struct {
	// Text is the message in the event's default language.
	Text string `json:"text"`
	// Texts are translations, by language tag ("de", "pt-BR").
	Texts map[string]string `json:"texts,omitempty"`
}

// Limits of a Notice (see Notice.Check).
const (
	// MaxNoticeRunes bounds each text of a notice, in characters.
	MaxNoticeRunes = 500
	// MaxNoticeLanguages bounds a notice's translations.
	MaxNoticeLanguages = 32
	// maxLangTag bounds a language tag (BCP 47's longest useful tags
	// are far shorter).
	maxLangTag = 35
)

// Check reports every problem of a notice, each naming its field, or nil.
// A text is 1 to MaxNoticeRunes characters of valid UTF-8 without
// control characters other than newlines; a language tag is letters,
// digits and hyphens, starting with 2 to 8 letters (BCP 47's shape).
func (n *Notice) Check() error {
	var errs []error
	checkText := func(field, s string) {
		switch {
		case strings.TrimSpace(s) == "":
			errs = append(errs, fmt.Errorf("%s: must not be empty", field))
		case !utf8.ValidString(s):
			errs = append(errs, fmt.Errorf("%s: must be valid UTF-8", field))
		case utf8.RuneCountInString(s) > MaxNoticeRunes:
			errs = append(errs, fmt.Errorf("%s: must be at most %d characters", field, MaxNoticeRunes))
		case strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }):
			errs = append(errs, fmt.Errorf("%s: must not hold control characters (newlines are fine)", field))
		}
	}
	checkText("text", n.Text)
	if len(n.Texts) > MaxNoticeLanguages {
		errs = append(errs, fmt.Errorf("texts: at most %d languages", MaxNoticeLanguages))
	}
	for _, tag := range slices.Sorted(maps.Keys(n.Texts)) {
		if !langTag(tag) {
			errs = append(errs, fmt.Errorf("texts: %q is not a language tag (such as de or pt-BR)", tag))
			continue
		}
		checkText("texts."+tag, n.Texts[tag])
	}
	return errors.Join(errs...)
}

// Equal reports whether two notices (either may be nil) say the same.
func (n *Notice) Equal(o *Notice) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.Text == o.Text && maps.Equal(n.Texts, o.Texts)
}

// Clone returns a deep copy of n (nil for nil).
func (n *Notice) Clone() *Notice {
	if n == nil {
		return nil
	}
	c := *n
	c.Texts = maps.Clone(n.Texts)
	return &c
}

// langTag reports whether s has the shape of a BCP 47 language tag:
// a primary subtag of 2 to 8 letters, then subtags of 1 to 8 letters or
// digits, joined by hyphens.
func langTag(s string) bool {
	if len(s) > maxLangTag {
		return false
	}
	for i, sub := range strings.Split(s, "-") {
		if len(sub) < 1 || len(sub) > 8 || (i == 0 && len(sub) < 2) {
			return false
		}
		for _, c := range []byte(sub) {
			letter := c|0x20 >= 'a' && c|0x20 <= 'z'
			if !letter && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}
