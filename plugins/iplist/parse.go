package iplist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Format is a file format of IP ranges.
type Format string

// The formats.
const (
	// FormatAuto detects the format from the content (see Detect).
	FormatAuto Format = "auto"
	// FormatCIDR is one prefix or bare address per line; "#" or ";"
	// starts a comment, blank lines are skipped.
	FormatCIDR Format = "cidr"
	// FormatAWS is AWS's ip-ranges.json: prefixes[].ip_prefix and
	// ipv6_prefixes[].ipv6_prefix.
	FormatAWS Format = "aws"
	// FormatGCP is Google's cloud.json or goog.json:
	// prefixes[].ipv4Prefix or prefixes[].ipv6Prefix.
	FormatGCP Format = "gcp"
	// FormatAzure is Azure's Service Tags file (ServiceTags_Public_*.json):
	// values[].properties.addressPrefixes[].
	FormatAzure Format = "azure"
	// FormatOracle is Oracle Cloud's public_ip_ranges.json:
	// regions[].cidrs[].cidr.
	FormatOracle Format = "oracle"
	// FormatGeofeed is an RFC 8805 geofeed CSV: the prefix is the first
	// column; "#" starts a comment line.
	FormatGeofeed Format = "geofeed"
)

// Formats lists the formats a config may name.
var Formats = []Format{FormatAuto, FormatCIDR, FormatAWS, FormatGCP, FormatAzure, FormatOracle, FormatGeofeed}

// MaxFileSize bounds the files Load reads: the largest published list
// (Azure's Service Tags) is a few MiB.
const MaxFileSize = 64 << 20

// Errors, for errors.Is.
var (
	// ErrInvalid: the content is not a valid list of its format.
	ErrInvalid = errors.New("iplist: invalid list")
	// ErrUnknownFormat: a format name that is not one of Formats, or
	// content whose format Detect cannot tell.
	ErrUnknownFormat = errors.New("iplist: unknown format")
	// ErrEmpty: the list has no prefixes (a wrong file, or a truncated
	// download).
	ErrEmpty = errors.New("iplist: no prefixes in the list")
	// ErrTooLarge: the file is over MaxFileSize.
	ErrTooLarge = errors.New("iplist: file too large")
)

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q", ErrUnknownFormat, s)
}

// Load reads the file at path and parses it in format f (FormatAuto
// detects it).
func Load(path string, f Format) ([]netip.Prefix, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("iplist: %w", err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, path, MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("iplist: reading %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, path, MaxFileSize)
	}
	return Parse(data, f)
}

// Parse parses data in format f (FormatAuto detects it). Prefixes with
// host bits set are masked ("10.1.2.3/8" is 10.0.0.0/8); a bare address
// is a /32 or /128. It fails, wrapping ErrInvalid and naming the line or
// JSON path, at the first entry that is not a prefix, and with ErrEmpty
// when there is none.
func Parse(data []byte, f Format) ([]netip.Prefix, error) {
	if f == FormatAuto {
		var err error
		if f, err = Detect(data); err != nil {
			return nil, err
		}
	}
	var (
		ps  []netip.Prefix
		err error
	)
	switch f {
	case FormatCIDR:
		ps, err = parseCIDR(data)
	case FormatGeofeed:
		ps, err = parseGeofeed(data)
	case FormatAWS:
		ps, err = parseAWS(data)
	case FormatGCP:
		ps, err = parseGCP(data)
	case FormatAzure:
		ps, err = parseAzure(data)
	case FormatOracle:
		ps, err = parseOracle(data)
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownFormat, f)
	}
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w (format %s)", ErrEmpty, f)
	}
	return ps, nil
}

// Detect tells the format from the content: JSON by its top-level keys
// (values: Azure; regions: Oracle; ipv6_prefixes, or prefixes with
// ip_prefix: AWS; prefixes with ipv4Prefix or ipv6Prefix: Google); text by
// its first entry line (a comma: geofeed; otherwise a CIDR list).
func Detect(data []byte) (Format, error) {
	data = trimBOM(data)
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return "", fmt.Errorf("%w: the content is empty", ErrUnknownFormat)
	}
	if t[0] != '{' {
		for line := range bytes.Lines(t) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 || line[0] == '#' || line[0] == ';' {
				continue
			}
			if bytes.IndexByte(line, ',') >= 0 {
				return FormatGeofeed, nil
			}
			return FormatCIDR, nil
		}
		return FormatCIDR, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(t, &top); err != nil {
		return "", fmt.Errorf("%w: JSON that does not parse: %v", ErrUnknownFormat, err)
	}
	switch {
	case top["values"] != nil:
		return FormatAzure, nil
	case top["regions"] != nil:
		return FormatOracle, nil
	case top["ipv6_prefixes"] != nil:
		return FormatAWS, nil
	case top["prefixes"] != nil:
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(top["prefixes"], &entries); err == nil {
			for _, e := range entries {
				switch {
				case e["ip_prefix"] != nil:
					return FormatAWS, nil
				case e["ipv4Prefix"] != nil || e["ipv6Prefix"] != nil:
					return FormatGCP, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w: JSON without the keys of a known format (aws, gcp, azure, oracle)", ErrUnknownFormat)
}

func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// parsePrefix reads a prefix or a bare address.
func parsePrefix(s string) (netip.Prefix, bool) {
	if strings.IndexByte(s, '/') >= 0 {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

func invalid(where, s string) error {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return fmt.Errorf("%w: %s: %s is not an IP prefix or address", ErrInvalid, where, strconv.Quote(s))
}

func parseCIDR(data []byte) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	n := 0
	for line := range bytes.Lines(trimBOM(data)) {
		n++
		if i := bytes.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		s := string(bytes.TrimSpace(line))
		if s == "" {
			continue
		}
		p, ok := parsePrefix(s)
		if !ok {
			return nil, invalid("line "+strconv.Itoa(n), s)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// parseGeofeed reads RFC 8805: ip_prefix,country,region,city,postal — only
// the first column matters here.
func parseGeofeed(data []byte) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	n := 0
	for line := range bytes.Lines(trimBOM(data)) {
		n++
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		first, _, _ := bytes.Cut(t, []byte(","))
		s := string(bytes.TrimSpace(first))
		p, ok := parsePrefix(s)
		if !ok {
			return nil, invalid("line "+strconv.Itoa(n), s)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func jsonError(f Format, err error) error {
	return fmt.Errorf("%w: not %s JSON: %v", ErrInvalid, f, err)
}

func parseAWS(data []byte) ([]netip.Prefix, error) {
	var doc struct {
		Prefixes []struct {
			IPPrefix *string `json:"ip_prefix"`
		} `json:"prefixes"`
		IPv6Prefixes []struct {
			IPv6Prefix *string `json:"ipv6_prefix"`
		} `json:"ipv6_prefixes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(FormatAWS, err)
	}
	ps := make([]netip.Prefix, 0, len(doc.Prefixes)+len(doc.IPv6Prefixes))
	for i, e := range doc.Prefixes {
		p, err := jsonPrefix(fmt.Sprintf("prefixes[%d].ip_prefix", i), e.IPPrefix, true)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	for i, e := range doc.IPv6Prefixes {
		p, err := jsonPrefix(fmt.Sprintf("ipv6_prefixes[%d].ipv6_prefix", i), e.IPv6Prefix, false)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// jsonPrefix reads a required prefix of one family (v4 or v6).
func jsonPrefix(where string, s *string, v4 bool) (netip.Prefix, error) {
	if s == nil {
		return netip.Prefix{}, fmt.Errorf("%w: %s is missing", ErrInvalid, where)
	}
	p, ok := parsePrefix(*s)
	if !ok {
		return netip.Prefix{}, invalid(where, *s)
	}
	if p.Addr().Is4() != v4 {
		want := "an IPv6"
		if v4 {
			want = "an IPv4"
		}
		return netip.Prefix{}, fmt.Errorf("%w: %s: %q is not %s prefix", ErrInvalid, where, *s, want)
	}
	return p, nil
}

func parseGCP(data []byte) ([]netip.Prefix, error) {
	var doc struct {
		Prefixes []struct {
			IPv4Prefix *string `json:"ipv4Prefix"`
			IPv6Prefix *string `json:"ipv6Prefix"`
		} `json:"prefixes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(FormatGCP, err)
	}
	ps := make([]netip.Prefix, 0, len(doc.Prefixes))
	for i, e := range doc.Prefixes {
		var (
			p   netip.Prefix
			err error
		)
		switch {
		case e.IPv4Prefix != nil && e.IPv6Prefix != nil:
			err = fmt.Errorf("%w: prefixes[%d] has both ipv4Prefix and ipv6Prefix", ErrInvalid, i)
		case e.IPv4Prefix != nil:
			p, err = jsonPrefix(fmt.Sprintf("prefixes[%d].ipv4Prefix", i), e.IPv4Prefix, true)
		case e.IPv6Prefix != nil:
			p, err = jsonPrefix(fmt.Sprintf("prefixes[%d].ipv6Prefix", i), e.IPv6Prefix, false)
		default:
			err = fmt.Errorf("%w: prefixes[%d] has neither ipv4Prefix nor ipv6Prefix", ErrInvalid, i)
		}
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func parseAzure(data []byte) ([]netip.Prefix, error) {
	var doc struct {
		Values []struct {
			Properties struct {
				AddressPrefixes []string `json:"addressPrefixes"`
			} `json:"properties"`
		} `json:"values"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(FormatAzure, err)
	}
	var ps []netip.Prefix
	for i, v := range doc.Values {
		for j, s := range v.Properties.AddressPrefixes {
			p, ok := parsePrefix(s)
			if !ok {
				return nil, invalid(fmt.Sprintf("values[%d].properties.addressPrefixes[%d]", i, j), s)
			}
			ps = append(ps, p)
		}
	}
	return ps, nil
}

func parseOracle(data []byte) ([]netip.Prefix, error) {
	var doc struct {
		Regions []struct {
			CIDRs []struct {
				CIDR *string `json:"cidr"`
			} `json:"cidrs"`
		} `json:"regions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(FormatOracle, err)
	}
	var ps []netip.Prefix
	for i, r := range doc.Regions {
		for j, c := range r.CIDRs {
			where := fmt.Sprintf("regions[%d].cidrs[%d].cidr", i, j)
			if c.CIDR == nil {
				return nil, fmt.Errorf("%w: %s is missing", ErrInvalid, where)
			}
			p, ok := parsePrefix(*c.CIDR)
			if !ok {
				return nil, invalid(where, *c.CIDR)
			}
			ps = append(ps, p)
		}
	}
	return ps, nil
}
