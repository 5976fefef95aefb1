package admission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func TestNoticeCheck(t *testing.T) {
	long := strings.Repeat("é", admission.MaxNoticeRunes)
	good := []admission.Notice{
		{Text: "Doors open at 10:00."},
		{Text: "two\nlines", Texts: map[string]string{"de": "zwei\nZeilen", "pt-BR": "x", "zh-Hant-TW": "y", "es-419": "z"}},
		{Text: long},
		{Text: "<b>shown as text</b>"}, // markup is not refused: it is never rendered as markup
	}
	for _, n := range good {
		if err := n.Check(); err != nil {
			t.Errorf("Check(%q): %v", n.Text, err)
		}
	}
	many := map[string]string{}
	for i := range admission.MaxNoticeLanguages + 1 {
		many["x"+string(rune('a'+i%26))+string(rune('a'+i/26))] = "t"
	}
	for _, c := range []struct {
		n    admission.Notice
		want []string // every problem named
	}{
		{admission.Notice{}, []string{"text: must not be empty"}},
		{admission.Notice{Text: " \n "}, []string{"text: must not be empty"}},
		{admission.Notice{Text: long + "x"}, []string{"text: must be at most 500"}},
		{admission.Notice{Text: "bell\a"}, []string{"text: must not hold control"}},
		{admission.Notice{Text: "tab\t"}, []string{"text: must not hold control"}},
		{admission.Notice{Text: "bad \xff"}, []string{"text: must be valid UTF-8"}},
		{admission.Notice{Text: "ok", Texts: map[string]string{"d": "x", "de_DE": "x", "de-": "x", "1a": "x", "": "x"}},
			[]string{`"d" is not`, `"de_DE" is not`, `"de-" is not`, `"1a" is not`, `"" is not`}},
		{admission.Notice{Text: "", Texts: map[string]string{"de": ""}}, []string{"text: must not be empty", "texts.de: must not be empty"}},
		{admission.Notice{Text: "ok", Texts: many}, []string{"at most 32 languages"}},
	} {
		err := c.n.Check()
		if err == nil {
			t.Errorf("Check(%+v) = nil", c.n)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Check(%+v) = %v, lacks %q", c.n, err, w)
			}
		}
	}
}

// TestNoticeThroughControl: a notice set on one replica reaches the gate
// of every replica within a tick; the gate's pointer changes only when
// the notice does (the proxy caches its JSON by it); a bad notice is
// refused and changes nothing.
func TestNoticeThroughControl(t *testing.T) {
	forStores(t, func(t *testing.T, k storeKind) {
		replicas := 2
		if k.name == "memstore" {
			replicas = 1
		}
		r := newModeRig(t, k, replicas, thresholdEvent("n"))
		r.at(t, 0)
		for _, e := range r.engines {
			if e.Gate("n").Notice() != nil {
				t.Fatal("a notice before any was set")
			}
		}
		n := &admission.Notice{Text: "Back at 10", Texts: map[string]string{"de": "Um 10 zurück"}}
		if _, err := r.engines[0].UpdateControl(ctx, "n", func(c *admission.Control) { c.Notice = n }); err != nil {
			t.Fatal(err)
		}
		n.Texts["de"] = "changed by the caller"
		first := r.engines[0].Gate("n").Notice()
		if first == nil || first.Texts["de"] != "Um 10 zurück" {
			t.Fatalf("notice at once on the replica that set it: %+v", first)
		}
		r.at(t, time.Second)
		r.at(t, 2*time.Second)
		for i, e := range r.engines {
			got := e.Gate("n").Notice()
			if got == nil || got.Text != "Back at 10" {
				t.Fatalf("replica %d: notice after a tick: %+v", i, got)
			}
		}
		if again := r.engines[0].Gate("n").Notice(); again != first {
			t.Fatal("the gate's notice pointer changed at a tick that did not change the notice")
		}
		bad := func(c *admission.Control) { c.Notice = &admission.Notice{Text: "\x00"} }
		if _, err := r.engines[0].UpdateControl(ctx, "n", bad); err == nil {
			t.Fatal("a notice with a control character was taken")
		}
		if got := r.engines[0].Gate("n").Notice(); got != first {
			t.Fatalf("a refused notice changed the gate: %+v", got)
		}
		if _, err := r.engines[0].UpdateControl(ctx, "n", func(c *admission.Control) { c.Notice = nil }); err != nil {
			t.Fatal(err)
		}
		r.at(t, 3*time.Second)
		for i, e := range r.engines {
			if got := e.Gate("n").Notice(); got != nil {
				t.Fatalf("replica %d: notice after clearing: %+v", i, got)
			}
		}
	})
}

// TestNextTick: on the leader the next tick is one interval after the
// last (or now when it is due); on a follower, one interval from now
// bounds it.
func TestNextTick(t *testing.T) {
	r := newModeRig(t, storeKinds[1], 2, thresholdEvent("nt"))
	if _, err := r.engines[0].NextTick("nope"); err == nil {
		t.Fatal("NextTick of an unknown event")
	}
	r.at(t, 0)
	start := r.clk.Now()
	r.clk.Add(300 * time.Millisecond)
	if got, _ := r.engines[0].NextTick("nt"); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("leader: NextTick = %v, want %v", got, start.Add(time.Second))
	}
	if got, _ := r.engines[1].NextTick("nt"); !got.Equal(r.clk.Now().Add(time.Second)) {
		t.Fatalf("follower: NextTick = %v, want now+1s", got)
	}
	r.clk.Add(2 * time.Second) // a tick is overdue
	if got, _ := r.engines[0].NextTick("nt"); !got.Equal(r.clk.Now()) {
		t.Fatalf("leader with a tick due: NextTick = %v, want now", got)
	}
}
