package signals

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/iplist"
)

// MaxReasonLength bounds ip_ranges.name.
const MaxReasonLength = 64

// IPRangesConfig is the section of the ip_ranges signal: suspicion 1 for
// a visitor whose address is in the given lists, typically the ranges
// cloud and hosting providers publish.
type IPRangesConfig struct {
	// The files of ranges, at least one. They are read when the config is
	// checked and when the signal is built (a restart or reload picks up
	// new versions).
	Files []IPRangesFile `yaml:"files"`
	// Reason reported on a hit, in logs and metrics: 1 to 64 characters
	// from [a-z0-9_]. Default "datacenter_ip".
	Name string `yaml:"name"`
}

// IPRangesFile is one file of ranges.
type IPRangesFile struct {
	// Path of the file; relative paths are relative to waitroom's working
	// directory.
	Path string `yaml:"path"`
	// Its format: auto (detected from the content, the default), cidr
	// (one prefix or address a line, # comments), aws (ip-ranges.json),
	// gcp (cloud.json, goog.json), azure (Service Tags JSON), oracle
	// (public_ip_ranges.json) or geofeed (RFC 8805 CSV).
	Format string `yaml:"format"`
}

// DefaultIPRangesConfig is the ip_ranges section's defaults (files are
// required).
func DefaultIPRangesConfig() IPRangesConfig { return IPRangesConfig{Name: iplist.DefaultReason} }

func (f IPRangesFile) format() string {
	if f.Format == "" {
		return string(iplist.FormatAuto)
	}
	return f.Format
}

// Validate checks c, reading and parsing every file.
func (c IPRangesConfig) Validate() error {
	var p problems
	if len(c.Files) == 0 {
		p.fail("files", "must list at least one file of IP ranges")
	}
	for i, f := range c.Files {
		if _, err := c.load(i, f); err != nil {
			p = append(p, err)
		}
	}
	if !validReason(c.Name) {
		p.fail("name", "must be 1 to %d characters from [a-z0-9_] (got %q)", MaxReasonLength, c.Name)
	}
	return p.err()
}

// load reads file i, returning a field error.
func (c IPRangesConfig) load(i int, f IPRangesFile) ([]netip.Prefix, error) {
	format, err := iplist.ParseFormat(f.format())
	if err != nil {
		return nil, plugins.Fail(fmt.Sprintf("files[%d].format", i), "must be one of %v (got %q)", iplist.Formats, f.Format)
	}
	if f.Path == "" {
		return nil, plugins.Fail(fmt.Sprintf("files[%d].path", i), "must be set")
	}
	ps, err := iplist.Load(f.Path, format)
	if err != nil {
		return nil, plugins.Fail(fmt.Sprintf("files[%d].path", i), "%v", err)
	}
	return ps, nil
}

func validReason(s string) bool {
	if s == "" || len(s) > MaxReasonLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func buildIPRanges(_ context.Context, c IPRangesConfig, env plugins.Env) (challenge.Signal, error) {
	var all []netip.Prefix
	for i, f := range c.Files {
		ps, err := c.load(i, f)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	set := iplist.NewSet(all)
	env.Log.Info("ip ranges loaded", "name", c.Name, "files", len(c.Files), "prefixes", len(all), "ranges", set.Len())
	return iplist.NewSignal(set, c.Name), nil
}
