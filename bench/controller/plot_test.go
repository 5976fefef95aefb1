package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/admission/sim/figures"
)

func TestWriteSVG(t *testing.T) {
	rows := make([]figures.Row, 60)
	for i := range rows {
		c := 20.0
		if i >= 20 && i < 40 {
			c = 10
		}
		rows[i] = figures.Row{T: i, Capacity: c, Busy: 15, P95: 250, Limit: float64(40 + i), Active: 30}
	}
	path := filepath.Join(t.TempDir(), "run.svg")
	s := figures.Scenario{Capacity: 20, BaseMS: 200, BrownStart: 20, BrownEnd: 40}
	if err := writeSVG(path, "test <run>", rows, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Well-formed XML with a line per series, each through every second.
	d := xml.NewDecoder(strings.NewReader(string(b)))
	lines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
			for _, a := range se.Attr {
				if a.Name.Local == "points" && len(strings.Fields(a.Value)) != len(rows) {
					t.Errorf("a line has %d points, want %d", len(strings.Fields(a.Value)), len(rows))
				}
			}
		}
	}
	if lines != 4 {
		t.Errorf("%d lines, want 4", lines)
	}
}
