package admission

import (
	"bufio"
	"crypto/sha256"
	"io"
	"strings"

	"github.com/bits-and-blooms/bloom/v3"
)

// Allowlist is a set of account ids (a presale's verified fans). A bloom
// filter answers most "not listed" lookups from a few cache lines; a hit
// is confirmed against the exact set of SHA-256 digests, so there are no
// false positives. Safe for concurrent reads; it is not changed after it
// is built.
type Allowlist struct {
	filter *bloom.BloomFilter
	exact  map[[32]byte]struct{}
}

// NewAllowlist builds an allowlist of the given account ids (blank ids
// are ignored).
func NewAllowlist(accounts []string) *Allowlist {
	a := &Allowlist{filter: bloom.NewWithEstimates(uint(max(len(accounts), 1)), 0.001),
		exact: make(map[[32]byte]struct{}, len(accounts))}
	for _, acc := range accounts {
		if acc = strings.TrimSpace(acc); acc != "" {
			sum := sha256.Sum256([]byte(acc))
			a.filter.Add(sum[:])
			a.exact[sum] = struct{}{}
		}
	}
	return a
}

// LoadAllowlist reads one account id per line; blank lines and lines
// starting with # are skipped.
func LoadAllowlist(r io.Reader) (*Allowlist, error) {
	var accounts []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		accounts = append(accounts, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return NewAllowlist(accounts), nil
}

// Contains reports whether account is listed.
func (a *Allowlist) Contains(account string) bool {
	if a == nil || account == "" {
		return false
	}
	sum := sha256.Sum256([]byte(account))
	if !a.filter.Test(sum[:]) {
		return false
	}
	_, ok := a.exact[sum]
	return ok
}

// Len is the number of distinct accounts listed.
func (a *Allowlist) Len() int {
	if a == nil {
		return 0
	}
	return len(a.exact)
}
