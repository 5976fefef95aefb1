package static

import (
	"slices"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	sup := []string{"en", "de", "es"}
	tests := []struct {
		header string
		def    string
		want   string
	}{
		{"", "en", "en"},
		{"", "de", "de"},
		{"de", "en", "de"},
		{"DE", "en", "de"},
		{"de-DE", "en", "de"},
		{"de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7", "en", "de"},
		{"en-US,en;q=0.9,de;q=0.8", "de", "en"},
		{"fr-FR,fr;q=0.9", "es", "es"},
		{"fr, es;q=0.5, de;q=0.7", "en", "de"},
		{"es;q=0.5, de;q=0.5", "en", "es"}, // tie: listed first wins
		{"de;q=0.5, es;q=0.5", "en", "de"},
		{"de;q=0, en;q=0.1", "es", "en"},
		{"de;q=0", "es", "es"},
		{"de-DE, de;q=0", "en", "en"},            // the exact range refuses German
		{"de-DE;q=0.3, de-AT;q=0.8", "en", "de"}, // the best prefix match counts
		{"*", "de", "de"},
		{"*;q=0.5, en;q=0.1", "es", "es"}, // * for the tags no range names, the default first
		{"en;q=0, *", "en", "de"},
		{"*;q=0", "en", "en"},
		{"es-419", "en", "es"},
		{"es-419;q=1.000", "en", "es"},
		{"es;q=1.5", "en", "en"},    // invalid q: the entry is skipped
		{"es;q=0.1234", "en", "en"}, // too many digits
		{"es;q=", "en", "en"},
		{"es;", "en", "en"},
		{"es;Q=0.8", "en", "es"},
		{"es;level=1;q=0.8, de;q=0.5", "en", "es"},
		{" \t es \t ; \t q=0.8 , de;q=0.7", "en", "es"},
		{",,,de,,", "en", "de"},
		{"d e, es", "en", "es"},
		{"1de, es;q=0.1", "en", "es"}, // a first subtag must be letters
		{"de-1996", "en", "de"},       // later subtags may be digits
		{"toolongtag-de, es;q=0.1", "en", "es"},
		{"de-, es;q=0.1", "en", "es"},
		{"-de, es;q=0.1", "en", "es"},
		{"en-GB-oxendict", "de", "en"},
		{"e", "de", "de"},
		{"deu", "en", "en"}, // not a prefix match: "de" + "u" is not a subtag
		{"ü, es", "en", "es"},
	}
	for _, tt := range tests {
		t.Run(tt.header+"/"+tt.def, func(t *testing.T) {
			if got := Negotiate([]byte(tt.header), sup, tt.def); got != tt.want {
				t.Errorf("Negotiate(%q, def %s) = %s; want %s", tt.header, tt.def, got, tt.want)
			}
		})
	}
}

func TestNegotiateRegionalSupported(t *testing.T) {
	sup := []string{"en-GB", "pt-BR", "pt-PT"}
	tests := []struct{ header, want string }{
		{"pt", "pt-BR"}, // a range matches tags that extend it, first supported wins
		{"pt-pt", "pt-PT"},
		{"pt-PT;q=0.5, pt-BR;q=0.9", "pt-BR"},
		{"en", "en-GB"},
		{"en-US", "fr"}, // neither extends the other
		{"fr", "fr"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := Negotiate([]byte(tt.header), sup, "fr"); got != tt.want {
				t.Errorf("Negotiate(%q) = %s; want %s", tt.header, got, tt.want)
			}
		})
	}
}

func TestParseQ(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"1", 1000, true}, {"0.5", 500, true}, {"0.123", 123, true},
		{"0.05", 50, true}, {"1.0", 1000, true}, {"1.000", 1000, true}, {"0.", 0, true},
		{"1.001", 0, false}, {"2", 0, false}, {".5", 0, false}, {"0.1234", 0, false},
		{"0,5", 0, false}, {"", 0, false}, {"0.a", 0, false}, {"-0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseQ([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseQ(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{
		"", "de", "de-DE,de;q=0.9,en;q=0.8", "*;q=0.1", "es;q=1.000", "a-b-c-d-e-f-g-h;q=0.001",
		",,;;==", "de;q=0;q=1", "\xff\xfe", "de-\x00", strings.Repeat("de-", 50),
	} {
		f.Add([]byte(s), "en")
	}
	sup := []string{"en", "de", "es"}
	regional := []string{"en-GB", "pt-BR", "pt", "pt-PT", "de", "zh-Hant-TW"}
	f.Fuzz(func(t *testing.T, header []byte, def string) {
		// The serving path's one-pass matcher agrees with the per-tag one.
		for _, s := range [][]string{sup, regional} {
			for d := -1; d < len(s); d++ {
				if a, b := negotiateOnePass(header, s, d), negotiatePerTag(header, s, d); a != b {
					t.Fatalf("header %q, supported %v, default %d: one pass chose %d, per tag %d", header, s, d, a, b)
				}
			}
		}
		got := Negotiate(header, sup, def)
		if got != def && !slices.Contains(sup, got) {
			t.Fatalf("Negotiate(%q, %q) = %q: neither supported nor the default", header, def, got)
		}
		// A language no entry accepts is never chosen over the default.
		if got != def {
			if q, _ := quality(header, got); q <= 0 {
				t.Fatalf("Negotiate(%q) chose %s, which the header does not accept", header, got)
			}
		}
		// Entries are split at commas, so an entry appended for a language
		// nobody supports changes nothing.
		more := append(append([]byte{}, header...), ",zz;q=0.9"...)
		if got2 := Negotiate(more, sup, def); got2 != got {
			t.Fatalf("Negotiate(%q) = %s but Negotiate(%q) = %s", header, got, more, got2)
		}
	})
}

// More languages than the one-pass matcher keeps take the per-tag path.
func TestNegotiateManyLanguages(t *testing.T) {
	sup := []string{"en", "de", "es", "fr", "it", "nl", "pl", "pt", "sv", "fi"}
	if got := Negotiate([]byte("fi;q=0.9, sv;q=0.95, xx"), sup, "en"); got != "sv" {
		t.Errorf("got %s; want sv", got)
	}
	if got := Negotiate([]byte("*;q=0.5"), sup, "it"); got != "it" {
		t.Errorf("got %s; want the default it", got)
	}
}

func TestNegotiateAllocs(t *testing.T) {
	h := []byte("fr-CH, fr;q=0.9, de-DE;q=0.8, de;q=0.7, *;q=0.5")
	sup := []string{"en", "de", "es"}
	if n := testing.AllocsPerRun(100, func() { Negotiate(h, sup, "en") }); n != 0 {
		t.Errorf("Negotiate allocates %.1f times per call", n)
	}
}
