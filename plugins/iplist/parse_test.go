package iplist

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The good fixtures are small files in the exact shape of the providers'
// published ones.
var goodFixtures = map[string]struct {
	format  Format
	want    []string // every prefix, in file order
	in, out []string // addresses the set must and must not contain
}{
	"aws-ip-ranges.json": {FormatAWS,
		[]string{"3.2.34.0/26", "52.94.76.0/22", "52.94.76.0/22", "13.34.37.64/27", "2600:1f14::/35", "2a05:d07a:a000::/40"},
		[]string{"3.2.34.63", "52.94.79.255", "13.34.37.80", "2600:1f14:1fff:ffff::1", "2a05:d07a:a0ff::"},
		[]string{"3.2.34.64", "52.94.80.0", "13.34.37.96", "2600:1f14:2000::", "2a05:d07a:a100::"}},
	"gcp-cloud.json": {FormatGCP,
		[]string{"34.1.208.0/20", "35.235.224.0/20", "2600:1900:8000::/44", "34.80.0.0/15"},
		[]string{"34.1.223.255", "34.81.255.255", "2600:1900:800f::1"},
		[]string{"34.1.224.0", "34.82.0.0", "2600:1900:8010::"}},
	"google-goog.json": {FormatGCP,
		[]string{"8.8.4.0/24", "8.8.8.0/24", "8.34.208.0/20", "2001:4860::/32", "2404:6800::/32"},
		[]string{"8.8.8.8", "8.8.4.4", "2001:4860:4860::8888", "::ffff:8.8.8.8"},
		[]string{"8.8.5.1", "2001:4861::1", "1.1.1.1"}},
	"google-googlebot.json": {FormatGCP,
		[]string{"2001:4860:4801:10::/64", "2001:4860:4801:12::/64", "66.249.64.0/27", "66.249.66.0/27"},
		[]string{"66.249.64.31", "66.249.66.1", "2001:4860:4801:10::1", "2001:4860:4801:12:ffff::"},
		[]string{"66.249.64.32", "66.249.65.1", "2001:4860:4801:11::1"}},
	"gcp-bingbot.json": {FormatGCP,
		[]string{"157.55.39.0/24", "207.46.13.0/24", "40.77.167.0/24"},
		[]string{"157.55.39.255", "40.77.167.1"},
		[]string{"157.55.40.0", "40.77.168.0"}},
	"azure-servicetags.json": {FormatAzure,
		[]string{"4.145.74.52/30", "20.21.42.88/30", "2603:1030:c06:6::/64", "13.69.0.0/17", "20.50.0.0/18", "2a01:111:f100:1000::/62"},
		[]string{"4.145.74.55", "13.69.127.255", "2603:1030:c06:6:ffff::", "2a01:111:f100:1003::1"},
		[]string{"4.145.74.56", "13.69.128.0", "2603:1030:c06:7::", "2a01:111:f100:1004::"}},
	"oracle-public_ip_ranges.json": {FormatOracle,
		[]string{"129.146.0.0/21", "134.70.24.0/21", "130.61.0.0/16"},
		[]string{"129.146.7.255", "134.70.31.1", "130.61.200.3"},
		[]string{"129.146.8.0", "130.62.0.0"}},
	"digitalocean-geofeed.csv": {FormatGeofeed,
		[]string{"5.101.96.0/21", "45.55.0.0/19", "64.225.0.0/20", "2400:6180::/48", "2604:a880:800::/48"},
		[]string{"5.101.103.255", "45.55.31.1", "2400:6180:0:ffff::1", "2604:a880:800::1"},
		[]string{"5.101.104.0", "45.55.32.0", "2400:6180:1::"}},
	"rfc8805-geofeed.csv": {FormatGeofeed,
		[]string{"192.0.2.0/25", "192.0.2.5/32", "192.0.2.128/25", "2001:db8::/32"},
		[]string{"192.0.2.0", "192.0.2.255", "2001:db8:ffff::"},
		[]string{"192.0.3.0", "2001:db9::"}},
	"cidr.txt": {FormatCIDR,
		[]string{"198.51.100.0/24", "203.0.113.7/32", "2001:db8:1234::/48", "2001:db8:ffff::1/128", "10.0.0.0/8"},
		[]string{"198.51.100.77", "203.0.113.7", "2001:db8:1234:ff::1", "2001:db8:ffff::1", "10.200.0.1", "::ffff:10.1.1.1"},
		[]string{"203.0.113.8", "2001:db8:ffff::2", "11.0.0.0", "198.51.101.0"}},
}

func TestParseGood(t *testing.T) {
	files, err := filepath.Glob("testdata/good/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(goodFixtures) {
		t.Errorf("%d good fixtures, %d expectations", len(files), len(goodFixtures))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			fx, ok := goodFixtures[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Detect(data); err != nil || got != fx.format {
				t.Errorf("Detect = %s, %v; want %s", got, err, fx.format)
			}
			for _, f := range []Format{FormatAuto, fx.format} {
				ps, err := Parse(data, f)
				if err != nil {
					t.Fatalf("Parse(%s): %v", f, err)
				}
				var got []string
				for _, p := range ps {
					got = append(got, p.String())
				}
				if !slices.Equal(got, fx.want) {
					t.Errorf("Parse(%s) = %v, want %v", f, got, fx.want)
				}
			}
			ps, err := Load(path, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			set := NewSet(ps)
			for _, a := range fx.in {
				if !set.Contains(netip.MustParseAddr(a)) {
					t.Errorf("set does not contain %s", a)
				}
			}
			for _, a := range fx.out {
				if set.Contains(netip.MustParseAddr(a)) {
					t.Errorf("set contains %s", a)
				}
			}
		})
	}
}

// Each bad fixture fails with the message in its .err file.
func TestParseBad(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range files {
		if strings.HasSuffix(path, ".err") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(path, filepath.Ext(path)) + ".err")
			if err != nil {
				t.Fatal(err)
			}
			ps, err := Load(path, FormatAuto)
			if err == nil {
				t.Fatalf("parsed: %v", ps)
			}
			if err.Error() != strings.TrimSpace(string(want)) {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("%v wraps none of the sentinel errors", err)
			}
		})
	}
	if n == 0 {
		t.Fatal("no bad fixtures")
	}
}

func TestParseFormatMismatch(t *testing.T) {
	data, err := os.ReadFile("testdata/good/aws-ip-ranges.json")
	if err != nil {
		t.Fatal(err)
	}
	// Read as Google's format, AWS's file has entries without either key.
	if _, err := Parse(data, FormatGCP); !errors.Is(err, ErrInvalid) {
		t.Errorf("AWS file as gcp: %v, want ErrInvalid", err)
	}
	// As Azure's, it has no values: empty.
	if _, err := Parse(data, FormatAzure); !errors.Is(err, ErrEmpty) {
		t.Errorf("AWS file as azure: %v, want ErrEmpty", err)
	}
	// As a CIDR list, its first line is not a prefix.
	if _, err := Parse(data, FormatCIDR); !errors.Is(err, ErrInvalid) {
		t.Errorf("AWS file as cidr: %v, want ErrInvalid", err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%s) = %s, %v", f, got, err)
		}
	}
	for _, s := range []string{"", "AWS", "json", "csv"} {
		if _, err := ParseFormat(s); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q) = %v, want ErrUnknownFormat", s, err)
		}
		if _, err := Parse([]byte("10.0.0.0/8"), Format(s)); s != "" && !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Parse(format %q) = %v, want ErrUnknownFormat", s, err)
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{"10.0.0.0/8\n", FormatCIDR},
		{"\xef\xbb\xbf# comment\n\n10.0.0.0/8,US,,,\n", FormatGeofeed},
		{"# only a comment\n", FormatCIDR},
		{`{"prefixes": [], "ipv6_prefixes": []}`, FormatAWS},
		{`  {"prefixes": [{"ip_prefix": "1.2.3.0/24"}]}`, FormatAWS},
		{`{"prefixes": [{"ipv6Prefix": "2001:db8::/32"}]}`, FormatGCP},
		{`{"values": []}`, FormatAzure},
		{`{"regions": []}`, FormatOracle},
	}
	for _, tt := range tests {
		if got, err := Detect([]byte(tt.in)); err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "  \n", `{"prefixes": []}`, `{"prefixes": 5}`, "{nope"} {
		if got, err := Detect([]byte(in)); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Detect(%q) = %s, %v; want ErrUnknownFormat", in, got, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.txt"), FormatAuto); err == nil || !strings.HasPrefix(err.Error(), "iplist: ") {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(big, FormatCIDR); !errors.Is(err, ErrTooLarge) {
		t.Errorf("large file: %v, want ErrTooLarge", err)
	}
}
