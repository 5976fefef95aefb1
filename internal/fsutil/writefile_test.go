package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFile(dir, "state", write("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, "state", write("two")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "two" {
		t.Fatalf("%q, %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}

	// A failed write leaves the old file and no temporary file.
	boom := errors.New("boom")
	err := WriteFile(dir, "state", func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile returned %v, want the write's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("a failed write replaced the file: %q", b)
	}
	if _, err := os.Stat(path + TempSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is left: %v", err)
	}

	// A leftover temporary file from a crash is overwritten.
	os.WriteFile(path+TempSuffix, []byte("crashed write, longer than the next"), 0o600)
	if err := WriteFile(dir, "state", write("three")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("%q", b)
	}
	if err := WriteFile(filepath.Join(dir, "missing"), "state", write("x")); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}
