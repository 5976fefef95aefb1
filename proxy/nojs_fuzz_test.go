package proxy

import (
	"net/url"
	"testing"
)

// FuzzParseNoJSForm: the form parser never panics, and what it accepts
// net/url reads the same, with no control character in any value.
func FuzzParseNoJSForm(f *testing.F) {
	for _, s := range []string{"event=show", "event=show&return=%2Fshow%2F", "event=a+b&return=/x?y=1", "event=%zz",
		"event=show&event=x", "event=show&", "&", "=", "event=%c2%85", "return=%2F&event=%e2%82%ac"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		form, err := parseNoJSForm(body)
		if err != nil {
			return
		}
		q, qerr := url.ParseQuery(string(body))
		if qerr != nil {
			t.Fatalf("accepted %q, which net/url refuses: %v", body, qerr)
		}
		if q.Get("event") != form.Event || q.Get("return") != form.Return || len(q["event"]) != 1 || len(q["return"]) > 1 {
			t.Fatalf("%q: parsed %+v, net/url %v", body, form, q)
		}
		for _, s := range []string{form.Event, form.Return} {
			for _, r := range s {
				if r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 {
					t.Fatalf("%q: control character in %q", body, s)
				}
			}
		}
	})
}
