package iplist

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// fuzzParse is the property every parser keeps: no panic, and on success
// a non-empty list of valid, masked prefixes whose Set contains the first
// and last address of each.
func fuzzParse(f *testing.F, format Format, seeds ...string) {
	for _, pattern := range seeds {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Parse(data, format)
		if err != nil {
			if ps != nil {
				t.Fatalf("prefixes %v with error %v", ps, err)
			}
			return
		}
		if len(ps) == 0 {
			t.Fatal("no prefixes and no error")
		}
		s := NewSet(ps)
		for _, p := range ps {
			if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" {
				t.Fatalf("parsed %v: not a valid masked prefix", p)
			}
			for _, a := range []netip.Addr{p.Addr(), lastAddr(p)} {
				if !s.Contains(a) {
					t.Fatalf("set of %v lacks %s", ps, a)
				}
			}
		}
	})
}

func FuzzParseCIDR(f *testing.F) {
	f.Add([]byte("10.0.0.0/8 ; x\n::ffff:1.2.3.4\n# c\n2001:db8::/129\n"))
	fuzzParse(f, FormatCIDR, "testdata/*/*.txt")
}

func FuzzParseGeofeed(f *testing.F) {
	f.Add([]byte("\xef\xbb\xbf192.0.2.0/24,US,US-CA,,\n#x\n,,,"))
	fuzzParse(f, FormatGeofeed, "testdata/*/*.csv")
}

func FuzzParseAWS(f *testing.F) { fuzzParse(f, FormatAWS, "testdata/*/aws-*.json") }

func FuzzParseGCP(f *testing.F) {
	fuzzParse(f, FormatGCP, "testdata/*/gcp-*.json", "testdata/*/google-*.json")
}

func FuzzParseAzure(f *testing.F) { fuzzParse(f, FormatAzure, "testdata/*/azure-*.json") }

func FuzzParseOracle(f *testing.F) { fuzzParse(f, FormatOracle, "testdata/*/oracle-*.json") }

func FuzzParseAuto(f *testing.F) { fuzzParse(f, FormatAuto, "testdata/*/*") }
