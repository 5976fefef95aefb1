package doctest

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// block is one fenced code block of a Markdown document.
type block struct {
	line int    // line of the opening fence, from 1
	lang string // first word of the info string: sh, yaml, json, ...
	info string // the rest of the info string: "run", "no-run: REASON", "check-config file=x.yaml"
	text string // the contents, each line ending in "\n"
}

// where names the block for a test failure: README.md:42.
func (b block) where(file string) string {
	return file + ":" + strconv.Itoa(b.line)
}

// parse splits a Markdown document into its fenced code blocks and the
// prose outside them (code blocks blanked, so that line numbers hold). A
// fence is three or more backticks or tildes at the start of a line,
// indented by at most three spaces, and a backtick fence's info string has
// no backtick; it is closed by a line of at least as many of the same
// character.
func parse(doc string) (blocks []block, prose string) {
	lines := strings.SplitAfter(doc, "\n")
	var out strings.Builder
	var cur *block
	var fence string
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		body := strings.TrimRight(trimmed, "\r\n")
		if cur == nil {
			if len(l)-len(trimmed) <= 3 && (strings.HasPrefix(body, "```") || strings.HasPrefix(body, "~~~")) {
				ch := body[0]
				n := len(body) - len(strings.TrimLeft(body, string(ch)))
				info := strings.TrimSpace(body[n:])
				if ch == '`' && strings.Contains(info, "`") {
					// Not a fence (CommonMark): inline code at the start of a line.
					out.WriteString(l)
					continue
				}
				fence = strings.Repeat(string(ch), n)
				lang, rest, _ := strings.Cut(info, " ")
				cur = &block{line: i + 1, lang: lang, info: strings.TrimSpace(rest)}
				out.WriteString("\n")
				continue
			}
			out.WriteString(l)
			continue
		}
		if strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]) == "" {
			blocks = append(blocks, *cur)
			cur = nil
			out.WriteString("\n")
			continue
		}
		cur.text += strings.TrimRight(l, "\r\n") + "\n"
		out.WriteString("\n")
	}
	if cur != nil { // an unclosed fence runs to the end of the document
		blocks = append(blocks, *cur)
	}
	return blocks, out.String()
}

var (
	// linkRE finds inline links and images: [text](target) or
	// [text](target "title"). Reference-style links are not used in
	// these documents.
	linkRE = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpanRE finds inline code, whose brackets are not links.
	codeSpanRE = regexp.MustCompile("`[^`\n]*`")
	// headingRE finds ATX headings.
	headingRE = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	// htmlAnchorRE finds explicit anchors: <a id="x"> or name="x".
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// links returns the targets of the inline links in prose, with the line
// each is on.
func links(prose string) (targets []string, lines []int) {
	for i, l := range strings.Split(prose, "\n") {
		l = codeSpanRE.ReplaceAllString(l, "``")
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
			lines = append(lines, i+1)
		}
	}
	return targets, lines
}

// anchors returns the fragment names of the document's headings as
// GitHub makes them, and of its explicit <a id> anchors.
func anchors(doc string) map[string]bool {
	_, prose := parse(doc)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(prose, -1) {
		slug := slugify(m[1])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlAnchorRE.FindAllStringSubmatch(prose, -1) {
		out[m[1]] = true
	}
	return out
}

// slugify turns a heading into GitHub's anchor: lower case, letters,
// digits, hyphens and underscores kept, spaces made hyphens, everything
// else (punctuation, backticks) dropped.
func slugify(heading string) string {
	heading = linkTextRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// linkTextRE reduces a link in a heading to its text.
var linkTextRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
