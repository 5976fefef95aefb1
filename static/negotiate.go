package static

import "github.com/waitroom/waitroom/internal/ascii"

// Negotiate picks the language for a visitor from an Accept-Language
// header value (RFC 9110 §12.5.4): the entry of supported with the
// highest quality value, ties going to the range listed first. A range
// matches a supported tag when they are equal or one is the other plus
// subtags ("de-CH" matches "de" and "de" matches "de-CH"), ignoring case;
// an exact match decides a tag's quality over prefix matches, so
// "de-DE, de;q=0" refuses German. "*" gives its quality to every tag no
// other range matched (def first). Entries with q=0, malformed ranges or
// malformed quality values are skipped. When nothing is acceptable, or
// the header is empty, Negotiate returns def.
//
// It does not allocate, and works on any bytes (the header is untrusted
// input). It is safe for concurrent use.
func Negotiate(acceptLanguage []byte, supported []string, def string) string {
	defIdx := -1
	for i, s := range supported {
		if s == def {
			defIdx = i
			break
		}
	}
	if i := negotiate(acceptLanguage, supported, defIdx); i >= 0 {
		return supported[i]
	}
	return def
}

// negotiate is Negotiate by index: the index in supported of the language
// to use, or -1 when no entry of the header accepts any of them. def is
// the default's index (or -1), preferred when only "*" matches. Up to
// maxOnePass languages are matched in one pass over the header (the
// serving path); more take one pass per language.
func negotiate(header []byte, supported []string, def int) int {
	if len(header) == 0 {
		return -1
	}
	if len(supported) <= maxOnePass {
		return negotiateOnePass(header, supported, def)
	}
	return negotiatePerTag(header, supported, def)
}

// maxOnePass is the most languages negotiateOnePass keeps on the stack.
const maxOnePass = 16

// negotiatePerTag asks quality about each supported tag in turn.
func negotiatePerTag(header []byte, supported []string, def int) int {
	best, bestQ, bestRank := -1, 0, 0
	for i, tag := range supported {
		q, rank := quality(header, tag)
		best, bestQ, bestRank = better(i, q, rank, def, best, bestQ, bestRank)
	}
	return best
}

// negotiateOnePass is negotiatePerTag with quality's bookkeeping for
// every tag at once, reading the header once.
func negotiateOnePass(header []byte, supported []string, def int) int {
	var q, rank [maxOnePass]int
	var exact [maxOnePass]bool
	for i := range supported {
		q[i] = -1
	}
	wildQ, pos := -1, 0
	for start := 0; start <= len(header); {
		end := start
		for end < len(header) && header[end] != ',' {
			end++
		}
		rng, eq, ok := parseEntry(header[start:end])
		start = end + 1
		if !ok {
			continue
		}
		pos++
		if len(rng) == 1 && rng[0] == '*' {
			if wildQ < 0 {
				wildQ = eq
			}
			continue
		}
		for i, tag := range supported {
			switch matchRange(rng, tag) {
			case 2:
				if !exact[i] {
					exact[i], q[i], rank[i] = true, eq, pos
				}
			case 1:
				if !exact[i] && eq > q[i] {
					q[i], rank[i] = eq, pos
				}
			}
		}
	}
	best, bestQ, bestRank := -1, 0, 0
	for i := range supported {
		qi, ri := q[i], rank[i]
		if qi < 0 && wildQ >= 0 {
			qi, ri = wildQ, wildcardRank
		}
		best, bestQ, bestRank = better(i, qi, ri, def, best, bestQ, bestRank)
	}
	return best
}

// better folds candidate i (quality q at rank) into the best so far:
// higher quality wins, then the range the visitor listed first, then
// (among "*" matches) the default, then the order of supported.
func better(i, q, rank, def, best, bestQ, bestRank int) (int, int, int) {
	if q <= 0 {
		return best, bestQ, bestRank
	}
	if rank == wildcardRank && i != def {
		rank++
	}
	if best < 0 || q > bestQ || q == bestQ && rank < bestRank {
		return i, q, rank
	}
	return best, bestQ, bestRank
}

// wildcardRank ranks a tag that only "*" accepts after every tag a named
// range accepts.
const wildcardRank = 1 << 30

// quality returns the quality (0..1000) the header gives tag and the
// position of the deciding range (lower is preferred by the visitor);
// q is -1 when no range matches tag.
func quality(header []byte, tag string) (q, rank int) {
	q, rank = -1, 0
	exact := false
	wildQ := -1
	pos := 0
	for start := 0; start <= len(header); {
		end := start
		for end < len(header) && header[end] != ',' {
			end++
		}
		rng, eq, ok := parseEntry(header[start:end])
		start = end + 1
		if !ok {
			continue
		}
		pos++
		if len(rng) == 1 && rng[0] == '*' {
			if wildQ < 0 {
				wildQ = eq
			}
			continue
		}
		switch matchRange(rng, tag) {
		case 2: // exact: the first exact range decides
			if !exact {
				exact, q, rank = true, eq, pos
			}
		case 1: // prefix either way: the best one counts unless an exact range exists
			if !exact && eq > q {
				q, rank = eq, pos
			}
		}
	}
	if q < 0 && wildQ >= 0 {
		return wildQ, wildcardRank
	}
	return q, rank
}

// parseEntry parses one Accept-Language element: OWS range *(OWS ";" OWS
// param) OWS. It returns the range and its quality in thousandths
// (1000 when there is no q parameter).
func parseEntry(e []byte) (rng []byte, q int, ok bool) {
	e = ascii.TrimOWS(e)
	i := 0
	for i < len(e) && e[i] != ';' {
		i++
	}
	rng = ascii.TrimOWS(e[:i])
	if !validRange(rng) {
		return nil, 0, false
	}
	q = 1000
	for i < len(e) { // e[i] == ';'
		j := i + 1
		for j < len(e) && e[j] != ';' {
			j++
		}
		p := ascii.TrimOWS(e[i+1 : j])
		i = j
		if len(p) >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=' {
			v, vok := parseQ(p[2:])
			if !vok {
				return nil, 0, false
			}
			q = v
		} else if len(p) == 0 {
			return nil, 0, false
		}
		// other parameters are not defined for Accept-Language; ignore them
	}
	return rng, q, true
}

// parseQ parses a qvalue: "0" ["." 0*3DIGIT] or "1" ["." 0*3"0"].
func parseQ(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 5 || (v[0] != '0' && v[0] != '1') {
		return 0, false
	}
	whole := int(v[0] - '0')
	if len(v) == 1 {
		return whole * 1000, true
	}
	if v[1] != '.' {
		return 0, false
	}
	frac, scale := 0, 100
	for _, c := range v[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		frac += int(c-'0') * scale
		scale /= 10
	}
	if whole == 1 && frac != 0 {
		return 0, false
	}
	return whole*1000 + frac, true
}

// validRange reports whether r is a language range: "*" or 1*8ALPHA
// *("-" 1*8alphanum).
func validRange(r []byte) bool {
	if len(r) == 1 && r[0] == '*' {
		return true
	}
	n, first := 0, true // length of the current subtag; in the first one
	for _, c := range r {
		switch {
		case c == '-':
			if n == 0 {
				return false
			}
			n, first = 0, false
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', !first && c >= '0' && c <= '9':
			if n++; n > 8 {
				return false
			}
		default:
			return false
		}
	}
	return n > 0
}

// matchRange returns 2 when rng equals tag, 1 when one is the other
// followed by more subtags, else 0; ASCII letters compare case-insensitively.
func matchRange(rng []byte, tag string) int {
	n := min(len(rng), len(tag))
	for i := 0; i < n; i++ {
		if ascii.Lower(rng[i]) != ascii.Lower(tag[i]) {
			return 0
		}
	}
	switch {
	case len(rng) == len(tag):
		return 2
	case len(rng) > len(tag) && rng[n] == '-', len(tag) > len(rng) && tag[n] == '-':
		return 1
	}
	return 0
}
