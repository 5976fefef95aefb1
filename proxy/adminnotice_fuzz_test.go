package proxy

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzNoticeBody: the notice body parser never panics, accepts only what
// encoding/json reads as the same notice (text present, nothing else),
// and the status JSON of what it accepts reads back as that notice.
func FuzzNoticeBody(f *testing.F) {
	for _, s := range []string{`{"text":"a"}`, `{"text":"a","texts":{"de":"b"}}`, `{"text":"a","texts":null}`,
		`{"texts":{}}`, `{"text":"\u003c\ud83d\ude00"}`, `{"text":"a","texts":{"de":"x","de":"y"}}`, `{"text":"a"}x`,
		`{"text":"a","texts":{"d\u0065":"x"}}`, `{"text":1}`, `{"text":"\ud800"}`, ``, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := parseNotice(body)
		if err != nil {
			return
		}
		var ref struct {
			Text  *string           `json:"text"`
			Texts map[string]string `json:"texts"`
		}
		if err := json.Unmarshal(body, &ref); err != nil || ref.Text == nil {
			t.Fatalf("accepted %q, which encoding/json does not read as a notice: %v", body, err)
		}
		if *ref.Text != n.Text || !maps.Equal(ref.Texts, n.Texts) {
			t.Fatalf("%q: parsed %+v, encoding/json reads %q %v", body, n, *ref.Text, ref.Texts)
		}
		var back struct {
			Text  string            `json:"text"`
			Texts map[string]string `json:"texts"`
		}
		out := appendNotice(nil, &n)
		if err := json.Unmarshal(out, &back); err != nil || back.Text != n.Text || (len(n.Texts) > 0 && !maps.Equal(back.Texts, n.Texts)) {
			t.Fatalf("%q: status JSON %s reads back as %+v (%v)", body, out, back, err)
		}
	})
}
