package challenge_test

import (
	"testing"

	"github.com/waitroom/waitroom/challenge"
)

func TestHeaderFingerprint(t *testing.T) {
	get := []challenge.Header{{"Host", "x"}, {"Connection", "keep-alive"}, {"sec-ch-ua", `"Chromium";v="140"`},
		{"User-Agent", "Mozilla/5.0 Chrome/140"}, {"Accept", "*/*"}, {"Sec-Fetch-Site", "same-origin"},
		{"Accept-Encoding", "gzip"}, {"Accept-Language", "en"}, {"Cookie", "a=b"}}
	post := []challenge.Header{{"Host", "x"}, {"Connection", "keep-alive"}, {"Content-Length", "12"},
		{"sec-ch-ua", `"Chromium";v="140"`}, {"User-Agent", "Mozilla/5.0 Chrome/141"}, {"Content-Type", "application/json"},
		{"Accept", "application/json"}, {"Origin", "https://x"}, {"Sec-Fetch-Site", "same-origin"},
		{"Accept-Encoding", "gzip"}, {"Accept-Language", "de"}}
	fp := challenge.HeaderFingerprint(get)
	if len(fp) != 12 {
		t.Fatalf("fingerprint %q: want 12 hex digits", fp)
	}
	if got := challenge.HeaderFingerprint(post); got != fp {
		t.Errorf("GET and POST of one browser: %s and %s, want the same", fp, got)
	}
	swapped := append([]challenge.Header(nil), get...)
	swapped[6], swapped[7] = swapped[7], swapped[6]
	if challenge.HeaderFingerprint(swapped) == fp {
		t.Error("another order gives the same fingerprint")
	}
	hints := append([]challenge.Header(nil), get...)
	hints[2].Value = `"HeadlessChrome";v="140"`
	if challenge.HeaderFingerprint(hints) == fp {
		t.Error("another brand list gives the same fingerprint")
	}
	if challenge.HeaderFingerprint(get[:7]) == fp {
		t.Error("a missing header gives the same fingerprint")
	}
}

func TestTLSStack(t *testing.T) {
	// Chrome's fresh and resumed hellos (one more extension, another c).
	fresh := challenge.TLSStack("t13d1516h2_8daaf6152771_02713d6af862")
	resumed := challenge.TLSStack("t13d1517h2_8daaf6152771_b1ff8ab2d16f")
	if fresh == "" || fresh != resumed {
		t.Fatalf("a resumed session changes the stack: %q and %q", fresh, resumed)
	}
	if noSNI := challenge.TLSStack("t13i1515h2_8daaf6152771_02713d6af862"); noSNI != fresh {
		t.Fatalf("connecting to an address, not a name, changes the stack: %q and %q", fresh, noSNI)
	}
	if fresh != "t1315h2_8daaf6152771" {
		t.Fatalf("TLSStack = %q", fresh)
	}
	if go_ := challenge.TLSStack("t13d1311h1_e8f1e7e78f70_6bebaf5329ac"); go_ == fresh {
		t.Fatal("another cipher list gives the same stack")
	}
	for _, bad := range []string{"", "t13d1516h2", "x13d1516h2_8daaf6152771_02713d6af862"} {
		if s := challenge.TLSStack(bad); s != "" {
			t.Errorf("TLSStack(%q) = %q, want empty", bad, s)
		}
	}
}
