package memstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

func TestEscape(t *testing.T) {
	for _, s := range []string{"", "a", "public", "a.b", "a%b", "%", "%%", "../x", "é", "x y", "A-Z_09"} {
		e := escape(s)
		for i := 0; i < len(e); i++ {
			if c := e[i]; c == '.' || c == '/' || c == 0 {
				t.Fatalf("escape(%q) = %q", s, e)
			}
		}
		if got, ok := unescape(e); !ok || got != s {
			t.Fatalf("unescape(escape(%q)) = %q, %v", s, got, ok)
		}
	}
	for _, bad := range []string{"", "%4", "%zz", "a.b", "%4g"} {
		if _, ok := unescape(bad); ok {
			t.Fatalf("unescape(%q) accepted", bad)
		}
	}
}

// TestTornTail: whatever a crash leaves after the last complete frame (a
// partial frame, a frame with a bad checksum, garbage) is cut off, and
// appends carry on after the good frames.
func TestTornTail(t *testing.T) {
	ctx := context.Background()
	v := []admission.VisitorID{admission.NewVisitorID(), admission.NewVisitorID(), admission.NewVisitorID()}
	for name, tail := range map[string]func(frame []byte) []byte{
		"partial header": func(f []byte) []byte { return f[:5] },
		"partial ids":    func(f []byte) []byte { return f[:frameHeader+10] },
		"bad checksum":   func(f []byte) []byte { f[len(f)-1] ^= 1; return f },
		"zeros":          func(f []byte) []byte { return make([]byte, len(f)) },
		"huge count":     func(f []byte) []byte { f[0] = 0xff; return f },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v[:2] {
				if err := s.AppendMember(ctx, "ev", "public", 0, x); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			path := filepath.Join(dir, "events", "ev", "public.0.members")
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The tail is a damaged copy of the last frame.
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.Write(tail(append([]byte(nil), good[frameHeader+idSize:]...)))
			f.Close()

			s, err = Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, _ := s.Members(ctx, "ev", "public", 0); len(got) != 2 || got[0] != v[0] || got[1] != v[1] {
				t.Fatalf("after a torn tail: %v", got)
			}
			if st, _ := os.Stat(path); st.Size() != int64(len(good)) {
				t.Fatalf("the tail was not cut: %d bytes, want %d", st.Size(), len(good))
			}
			if err := s.AppendMember(ctx, "ev", "public", 0, v[2]); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, _ = Open(Options{Dir: dir})
			if got, _ := s.Members(ctx, "ev", "public", 0); len(got) != 3 || got[2] != v[2] {
				t.Fatalf("after appending past a cut tail: %v", got)
			}
		})
	}
}
