// The Content-Security-Policy of the pages: the hashes of their inline
// blocks (found by a small scanner of the rendered HTML) and the sources
// a policy allows.

package static

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/waitroom/waitroom/internal/ascii"
)

// policy collects what the Content-Security-Policy must allow.
type policy struct {
	scripts, styles, img map[string]bool
}

func newPolicy() *policy {
	return &policy{scripts: map[string]bool{}, styles: map[string]bool{}, img: map[string]bool{}}
}

// note adds the hashes of page's inline scripts and style elements. An
// inline event handler or style attribute would be refused by the policy,
// so a page with one is an error.
func (c *policy) note(page []byte) error {
	scripts, styles, err := inlineBlocks(page)
	if err != nil {
		return err
	}
	for _, s := range scripts {
		c.scripts[hashSource(s)] = true
	}
	for _, s := range styles {
		c.styles[hashSource(s)] = true
	}
	return nil
}

func hashSource(b []byte) string {
	sum := sha256.Sum256(b)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func (c *policy) String() string { return c.with(CSPSources{}) }

// with is the policy with extra's sources added (validated by resolve).
func (c *policy) with(extra CSPSources) string {
	var b strings.Builder
	list := func(srcs ...[]string) {
		for _, l := range srcs {
			for _, s := range l {
				b.WriteString(" " + s)
			}
		}
	}
	b.WriteString("default-src 'none'; script-src 'self'")
	list(slices.Sorted(maps.Keys(c.scripts)), extra.Script)
	b.WriteString("; style-src 'self'")
	list(slices.Sorted(maps.Keys(c.styles)), extra.Style)
	b.WriteString("; img-src 'self'")
	list(slices.Sorted(maps.Keys(c.img)))
	b.WriteString("; worker-src 'self'; connect-src 'self'")
	list(extra.Connect)
	if len(extra.Frame) > 0 {
		b.WriteString("; frame-src")
		list(extra.Frame)
	}
	b.WriteString("; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	return b.String()
}

// wasmEval is the script-src source that lets a page compile WebAssembly
// (and only that: eval and new Function stay refused). The room page
// needs it for the proof-of-work solver's search in the page's main
// thread; Workers have a policy of their own (the worker script is
// served without one).
const wasmEval = "'wasm-unsafe-eval'"

// room is the room page's policy: wasmEval, then widget's sources.
func (c *policy) room(widget CSPSources) string {
	widget.Script = append([]string{wasmEval}, widget.Script...)
	return c.with(widget)
}

// inlineBlocks returns the contents of page's inline <script> elements
// that run (no src, a JavaScript type) and of its <style> elements. It
// reports inline event handler attributes (on...=) and style attributes,
// which a hash-based policy cannot allow.
func inlineBlocks(page []byte) (scripts, styles [][]byte, err error) {
	lower := ascii.AppendLower(make([]byte, 0, len(page)), page)
	for i := 0; i < len(lower); {
		j := bytes.IndexByte(lower[i:], '<')
		if j < 0 {
			break
		}
		i += j + 1
		if bytes.HasPrefix(lower[i:], []byte("!--")) {
			end := bytes.Index(lower[i:], []byte("-->"))
			if end < 0 {
				break
			}
			i += end + 3
			continue
		}
		name := tagName(lower[i:])
		if name == "" {
			continue
		}
		gt := bytes.IndexByte(lower[i:], '>')
		if gt < 0 {
			break
		}
		attrs := parseAttrs(lower[i+len(name) : i+gt])
		if a := badAttribute(attrs); a != "" {
			return nil, nil, fmt.Errorf("<%s> has a %s attribute, which the Content-Security-Policy refuses: use a <script> or <style> element", name, a)
		}
		i += gt + 1
		if name != "script" && name != "style" {
			continue
		}
		end := bytes.Index(lower[i:], []byte("</"+name))
		if end < 0 {
			return nil, nil, fmt.Errorf("<%s> is not closed", name)
		}
		body := page[i : i+end]
		i += end
		_, external := attrValue(attrs, "src")
		typ, _ := attrValue(attrs, "type")
		switch {
		case name == "style":
			styles = append(styles, body)
		case external, !jsType(typ):
		default:
			scripts = append(scripts, body)
		}
	}
	return scripts, styles, nil
}

// tagName returns the lower-case element name at the start of b ("" for
// an end tag, a doctype or text).
func tagName(b []byte) string {
	n := 0
	for n < len(b) && (b[n] >= 'a' && b[n] <= 'z' || n > 0 && b[n] >= '0' && b[n] <= '9') {
		n++
	}
	if n == 0 || n < len(b) && !isSpaceOrEnd(b[n]) {
		return ""
	}
	return string(b[:n])
}

func isSpaceOrEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>'
}

// attr is one attribute of a start tag (name in lower case).
type attr struct{ name, value string }

// parseAttrs splits a start tag's attribute text (after the element name,
// before '>') into attributes, as the HTML tokenizer would for
// well-formed markup.
func parseAttrs(b []byte) []attr {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	var out []attr
	i := 0
	for i < len(b) {
		for i < len(b) && (isSpace(b[i]) || b[i] == '/') {
			i++
		}
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '=' {
			i++
		}
		if i == start {
			if i < len(b) {
				i++ // a stray '='
			}
			continue
		}
		a := attr{name: string(b[start:i])}
		j := i
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if j < len(b) && b[j] == '=' {
			j++
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if j < len(b) && (b[j] == '"' || b[j] == '\'') {
				q := b[j]
				end := bytes.IndexByte(b[j+1:], q)
				if end < 0 {
					end = len(b) - j - 1
				}
				a.value = string(b[j+1 : j+1+end])
				j += end + 2
			} else {
				v := j
				for j < len(b) && !isSpace(b[j]) {
					j++
				}
				a.value = string(b[v:j])
			}
			i = j
		}
		out = append(out, a)
	}
	return out
}

func badAttribute(attrs []attr) string {
	for _, a := range attrs {
		if a.name == "style" || len(a.name) > 2 && strings.HasPrefix(a.name, "on") {
			return a.name
		}
	}
	return ""
}

// attrValue returns the value of attribute name and whether it is there.
func attrValue(attrs []attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.name == name {
			return a.value, true
		}
	}
	return "", false
}

// jsType reports whether a <script type> runs as JavaScript (the HTML
// standard's list, plus "" and "module").
func jsType(t string) bool {
	t = strings.TrimSpace(t)
	switch t {
	case "", "module", "text/javascript", "application/javascript", "application/ecmascript",
		"application/x-ecmascript", "application/x-javascript", "text/ecmascript",
		"text/javascript1.0", "text/javascript1.1", "text/javascript1.2", "text/javascript1.3",
		"text/javascript1.4", "text/javascript1.5", "text/jscript", "text/livescript",
		"text/x-ecmascript", "text/x-javascript":
		return true
	}
	return false
}
