package static

import "testing"

func TestParseColor(t *testing.T) {
	tests := []struct {
		in    string
		rgb   uint32
		canon string
		ok    bool
	}{
		{"#fff", 0xffffff, "#fff", true},
		{"#0B57D0", 0x0b57d0, "#0b57d0", true},
		{"#a1b", 0xaa11bb, "#a1b", true},
		{"RebeccaPurple", 0x663399, "rebeccapurple", true},
		{"navy", 0x000080, "navy", true},
		{"#ffff", 0, "", false},
		{"#ggg", 0, "", false},
		{"#", 0, "", false},
		{"", 0, "", false},
		{"transparent", 0, "", false},
		{"rgb(0,0,0)", 0, "", false},
		{"red ", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			rgb, canon, ok := parseColor(tt.in)
			if ok != tt.ok || rgb != tt.rgb || canon != tt.canon {
				t.Errorf("parseColor(%q) = %06x %q %v; want %06x %q %v", tt.in, rgb, canon, ok, tt.rgb, tt.canon, tt.ok)
			}
		})
	}
	if len(NamedColors()) != 148 {
		t.Errorf("%d named colours, CSS has 148", len(NamedColors()))
	}
}

func TestDefaultColoursContrast(t *testing.T) {
	bg, _, _ := parseColor(DefaultBackground)
	fg, _, _ := parseColor(DefaultText)
	accent, _, _ := parseColor(DefaultAccent)
	for _, c := range []struct {
		name string
		a, b uint32
		min  float64
	}{
		{"text on background", fg, bg, 7},
		{"accent (links) on background", accent, bg, 4.5},
		{"button text on accent", 0xffffff, accent, 4.5},
		{"focus ring and bar border against background", fg, bg, 3},
	} {
		if r := contrast(c.a, c.b); r < c.min {
			t.Errorf("%s: contrast %.2f < %.1f", c.name, r, c.min)
		}
	}
	if r := contrast(0x000000, 0xffffff); r < 20.99 || r > 21.01 {
		t.Errorf("contrast(black, white) = %.3f, want 21", r)
	}
}
