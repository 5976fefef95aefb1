package app

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"testing"
)

func TestEnsureProcsForJournal(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	runtime.GOMAXPROCS(1)
	ensureProcsForJournal(log, "admission")
	if n := runtime.GOMAXPROCS(0); n != minProcsForJournal {
		t.Fatalf("GOMAXPROCS is %d after raising it from 1, want %d", n, minProcsForJournal)
	}
	if !strings.Contains(out.String(), "from=1 to=2") || !strings.Contains(out.String(), "store=admission") {
		t.Errorf("the log does not say what changed: %q", out.String())
	}

	out.Reset()
	runtime.GOMAXPROCS(3)
	ensureProcsForJournal(log, "inventory")
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS is %d, want 3 left alone", n)
	}
	if out.Len() != 0 {
		t.Errorf("logged %q without changing anything", out.String())
	}
}
