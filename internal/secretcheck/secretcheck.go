package secretcheck

import (
	"strconv"
	"strings"
)

// MinDistinct is the fewest different bytes a secret may have. A random
// 32-byte hex string has about 14; one typed by hand to reach the length
// ("aaaabbbb...", "12121212...") has far fewer.
const MinDistinct = 8

// MaxPeriod is the longest pattern whose repetition makes a secret weak:
// "abcdabcdabcd..." repeats a 4-byte pattern.
const MaxPeriod = 16

// placeholders are values of examples and documentation, and words people
// leave in a secret they mean to replace. A secret containing one
// (case-insensitive) is refused.
var placeholders = []string{
	"changeme", "change-me", "change_me", "change me",
	"replaceme", "replace-me", "replace_me",
	"placeholder", "example", "your-secret", "your_secret", "yoursecret",
	"openssl rand", "waitroom keygen", // the command pasted instead of its output
	"${", "...", "xxxxxx",
}

// Hint is what to tell an operator whose secret is refused.
const Hint = "waitroom keygen -secret (or openssl rand -hex 32) makes a good one"

// Weak says why s is not fit to be a secret of at least min bytes, or ""
// when it is. The reasons, checked in this order, never quote s:
//   - shorter than min bytes;
//   - contains a placeholder from the examples ("changeme", "example",
//     "${", "...", a pasted "openssl rand" command);
//   - one byte repeated, or a pattern of at most MaxPeriod bytes repeated
//     over the whole secret;
//   - fewer than MinDistinct different bytes;
//   - a run of consecutive bytes counting up or down by one over the
//     whole secret ("abcdefgh...", "0123456789...").
func Weak(s string, min int) string {
	if len(s) < min {
		return "is too short: at least " + strconv.Itoa(min) + " bytes are required (got " + strconv.Itoa(len(s)) + ")"
	}
	lower := strings.ToLower(s)
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return "looks like a placeholder from an example, not a secret"
		}
	}
	if p := period(s); p > 0 {
		if p == 1 {
			return "is one character repeated"
		}
		return "is a short pattern repeated"
	}
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			distinct++
		}
	}
	if distinct < MinDistinct {
		return "has too few different characters (" + strconv.Itoa(distinct) + ", want at least " + strconv.Itoa(MinDistinct) + ")"
	}
	if sequence(s) {
		return "is a run of consecutive characters"
	}
	return ""
}

// period returns the length of the shortest pattern, at most MaxPeriod
// bytes and at most half of s, whose repetition is s (the last repetition
// may be cut short); 0 when there is none.
func period(s string) int {
	for p := 1; p <= MaxPeriod && 2*p <= len(s); p++ {
		ok := true
		for i := p; i < len(s); i++ {
			if s[i] != s[i-p] {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
	return 0
}

// sequence reports whether every byte of s is the one before it plus one
// (or every one minus one), wrapping around the alphabet it runs in:
// "abc...xyzabc" and "0123456789012" count, with at most one wrap per
// alphabet length.
func sequence(s string) bool {
	if len(s) < 3 {
		return false
	}
	up, down := true, true
	for i := 1; i < len(s); i++ {
		d := int(s[i]) - int(s[i-1])
		up = up && (d == 1 || wrapped(s[i-1], s[i]))
		down = down && (d == -1 || wrapped(s[i], s[i-1]))
	}
	return up || down
}

// wrapped reports whether b follows a by wrapping around: z to a, Z to A,
// 9 to 0.
func wrapped(a, b byte) bool {
	return a == 'z' && b == 'a' || a == 'Z' && b == 'A' || a == '9' && b == '0'
}
