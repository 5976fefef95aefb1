package signals

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// Bounds of the known_bad section.
const (
	// MaxKnownBadFalsePositiveRate: a known-bad hit is suspicion 1, so
	// more than one visitor in a hundred wrongly flagged is never wanted.
	MaxKnownBadFalsePositiveRate = 0.01
	// MaxKnownBadFileSize bounds each list file.
	MaxKnownBadFileSize = 256 << 20
	// MaxKnownBadLine bounds a line of a list file.
	MaxKnownBadLine = 4096
)

// Kinds of known_bad.files[].kind.
const (
	KindVisitor = "visitor"
	KindJA4     = "ja4"
	KindIP      = "ip"
)

// KnownBadConfig is the section of the known_bad signal: suspicion 1 for
// a request whose visitor id, JA4 fingerprint or address is listed. The
// lists are kept in a Bloom filter (see challenge.KnownBadSignal), so
// millions of entries fit in a few MiB.
type KnownBadConfig struct {
	// Visitor ids.
	Visitors []string `yaml:"visitors"`
	// JA4 fingerprints.
	JA4 []string `yaml:"ja4"`
	// Single IP addresses (ranges belong in ip_ranges).
	IPs []string `yaml:"ips"`
	// Files of more entries, one a line; blank lines and lines starting
	// with # are skipped. Read when the config is checked and when the
	// signal is built.
	Files []KnownBadFile `yaml:"files"`
	// Chance, above 0 and at most 0.01, that an unlisted key is taken for
	// a listed one. Default 1e-6 (challenge.DefaultKnownBadFalsePositiveRate).
	FalsePositiveRate float64 `yaml:"false_positive_rate"`
}

// KnownBadFile is one file of known-bad entries.
type KnownBadFile struct {
	// Path of the file; relative paths are relative to waitroom's working
	// directory.
	Path string `yaml:"path"`
	// What every line is: visitor, ja4 or ip.
	Kind string `yaml:"kind"`
}

// DefaultKnownBadConfig is the known_bad section's defaults (some list is
// required).
func DefaultKnownBadConfig() KnownBadConfig {
	return KnownBadConfig{FalsePositiveRate: challenge.DefaultKnownBadFalsePositiveRate}
}

// Validate checks c, reading every file; a file's problems stop at its
// first bad line.
func (c KnownBadConfig) Validate() error {
	var p problems
	for i, v := range c.Visitors {
		if msg := checkEntry(KindVisitor, v); msg != "" {
			p.fail(fmt.Sprintf("visitors[%d]", i), "%s", msg)
		}
	}
	for i, v := range c.JA4 {
		if msg := checkEntry(KindJA4, v); msg != "" {
			p.fail(fmt.Sprintf("ja4[%d]", i), "%s", msg)
		}
	}
	for i, v := range c.IPs {
		if msg := checkEntry(KindIP, v); msg != "" {
			p.fail(fmt.Sprintf("ips[%d]", i), "%s", msg)
		}
	}
	for i, f := range c.Files {
		if _, err := f.read(i, nil); err != nil {
			p = append(p, err)
		}
	}
	if len(c.Visitors)+len(c.JA4)+len(c.IPs)+len(c.Files) == 0 {
		p.fail("", "lists nothing: give visitors, ja4, ips or files")
	}
	if r := c.FalsePositiveRate; !(r > 0 && r <= MaxKnownBadFalsePositiveRate) {
		p.fail("false_positive_rate", "must be above 0 and at most %v (got %v)", MaxKnownBadFalsePositiveRate, r)
	}
	return p.err()
}

// checkEntry returns what is wrong with entry v of kind, or "".
func checkEntry(kind, v string) string {
	switch kind {
	case KindVisitor:
		if v == "" {
			return "must not be empty"
		}
	case KindJA4:
		if !challenge.ValidJA4(v) {
			return fmt.Sprintf("must be a JA4 fingerprint such as %s (got %q)", ja4Example, v)
		}
	case KindIP:
		if a, err := netip.ParseAddr(v); err != nil || a.Zone() != "" {
			return fmt.Sprintf("must be an IP address (got %q)", v)
		}
	}
	return ""
}

// read reads file i's entries, appending them to l when l is not nil.
func (f KnownBadFile) read(i int, l *challenge.KnownBadLists) (int, error) {
	kind := f.Kind
	switch kind {
	case KindVisitor, KindJA4, KindIP:
	default:
		return 0, plugins.Fail(fmt.Sprintf("files[%d].kind", i), "must be %s, %s or %s (got %q)", KindVisitor, KindJA4, KindIP, f.Kind)
	}
	path := fmt.Sprintf("files[%d].path", i)
	if f.Path == "" {
		return 0, plugins.Fail(path, "must be set")
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return 0, plugins.Fail(path, "%v", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(io.LimitReader(fh, MaxKnownBadFileSize+1))
	sc.Buffer(make([]byte, 0, 4096), MaxKnownBadLine)
	n, line, size := 0, 0, 0
	for sc.Scan() {
		line++
		size += len(sc.Bytes()) + 1
		s := trimLine(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		if msg := checkEntry(kind, s); msg != "" {
			return 0, plugins.Fail(path, "%s line %d: %s", f.Path, line, msg)
		}
		n++
		if l != nil {
			switch kind {
			case KindVisitor:
				l.Visitors = append(l.Visitors, s)
			case KindJA4:
				l.JA4 = append(l.JA4, s)
			case KindIP:
				l.IPs = append(l.IPs, s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, plugins.Fail(path, "reading %s after line %d: %v", f.Path, line, err)
	}
	if size > MaxKnownBadFileSize {
		return 0, plugins.Fail(path, "%s is over %d bytes", f.Path, MaxKnownBadFileSize)
	}
	return n, nil
}

// trimLine trims spaces, tabs and a CR.
func trimLine(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

func buildKnownBad(_ context.Context, c KnownBadConfig, env plugins.Env) (challenge.Signal, error) {
	l := challenge.KnownBadLists{
		Visitors:          append([]string(nil), c.Visitors...),
		JA4:               append([]string(nil), c.JA4...),
		IPs:               append([]string(nil), c.IPs...),
		FalsePositiveRate: c.FalsePositiveRate,
	}
	for i, f := range c.Files {
		if _, err := f.read(i, &l); err != nil {
			return nil, err
		}
	}
	s, err := challenge.NewKnownBadSignal(l)
	if err != nil {
		return nil, err
	}
	env.Log.Info("known-bad lists loaded", "entries", s.Len(), "files", len(c.Files))
	return s, nil
}
