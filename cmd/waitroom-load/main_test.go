package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSimCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"sim", "-scenario", "steady", "-duration", "8m"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"ETA shown at join", "fairness: pre-queue Spearman"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, out.String())
		}
	}
	if code := run([]string{"sim", "-scenario", "nope"}, &out, &errb); code != 2 {
		t.Fatalf("unknown scenario: exit %d", code)
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Fatalf("no mode: exit %d", code)
	}
}
