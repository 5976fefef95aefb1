package jsonenc

import (
	"encoding/json"
	"testing"
	"time"
)

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\`, "<a&b>", "\u2028\u2029", "\x00\x1f\x7f", "\xff\xfe", "é🎫", "\t\n\r\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

func TestTimeAndStrings(t *testing.T) {
	for _, tm := range []time.Time{time.Unix(1795313800, 507000000).UTC(), time.Unix(0, 0).UTC(), time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)} {
		want, _ := json.Marshal(tm)
		if got := Time(nil, tm); string(got) != string(want) {
			t.Errorf("Time = %s, want %s", got, want)
		}
	}
	for _, ss := range [][]string{nil, {}, {"a"}, {"a", "b\"c"}} {
		want, _ := json.Marshal(ss)
		if ss == nil {
			want = []byte("[]")
		}
		if got := Strings(nil, ss); string(got) != string(want) {
			t.Errorf("Strings(%q) = %s, want %s", ss, got, want)
		}
	}
}
