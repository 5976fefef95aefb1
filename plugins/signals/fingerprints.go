package signals

import (
	"io"
	"os"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// fingerprints returns the fingerprint data a signal reads: the shipped
// list (challenge.DefaultFingerprints) when builtin is set, then the
// entries of file (a JSON file in the shipped file's format) when set.
// Its error names the file key.
func fingerprints(builtin bool, file string) ([]challenge.Fingerprint, error) {
	var fs []challenge.Fingerprint
	if builtin {
		fs = challenge.DefaultFingerprints()
	}
	if file == "" {
		return fs, nil
	}
	fh, err := os.Open(file)
	if err != nil {
		return nil, plugins.Fail("file", "%v", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, challenge.MaxFingerprintDataSize+1))
	if err != nil {
		return nil, plugins.Fail("file", "reading %s: %v", file, err)
	}
	own, err := challenge.ParseFingerprints(data)
	if err != nil {
		return nil, plugins.Fail("file", "%s: %v", file, err)
	}
	return append(fs, own...), nil
}

// browserJA4s are the JA4s of the browsers in fs.
func browserJA4s(fs []challenge.Fingerprint) []string {
	var out []string
	for _, f := range fs {
		if f.Kind == challenge.FingerprintBrowser {
			out = append(out, f.JA4)
		}
	}
	return out
}
