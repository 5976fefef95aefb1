package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads the configuration file at path, expands environment variable
// references with os.LookupEnv, and returns the Config with defaults
// applied to every key the file leaves out. It does not validate: call
// Validate. Problems in the file come back as *Error values (see
// Problems) naming the file and line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, os.LookupEnv)
	if err != nil {
		return nil, InFile(path, err)
	}
	return c, nil
}

// Parse is Load for a file's contents, with lookupEnv in place of
// os.LookupEnv; a nil lookupEnv treats every variable as unset.
//
// data must hold exactly one YAML document whose top level is a mapping.
// Unknown keys are errors. In every scalar value (not in keys or comments)
// "${NAME}" is replaced by the variable's value, "${NAME:-default}" by the
// value or, when the variable is unset or empty, by default (taken as
// written), and "$$" by a single "$"; any other "$" is an error, and so is
// a ${NAME} whose variable is unset. The replacement is plain text inside
// the one value, never expanded again: a variable cannot add keys or
// change the document's structure. An unquoted value that is entirely a
// number or true/false after expansion can fill a number or boolean key.
//
// Problems come back in line order, as *Error values (see Problems).
// Messages never quote a value that came from the environment.
func Parse(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	doc, err := decodeOne(data)
	if err != nil {
		return nil, err
	}
	w := walker{lookupEnv: lookupEnv, seen: make(map[walkKey]bool)}
	w.walk(doc.Content[0], configType, "")
	if w.badRefs {
		return nil, errors.Join(w.errs...)
	}
	c := Default()
	errs := w.errs
	if err := doc.Decode(c); err != nil {
		for _, p := range Problems(yamlProblems(err, w.pathAt)) {
			errs = append(errs, p)
		}
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b error) int {
			return cmp.Compare(lineOf(a), lineOf(b))
		})
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// decodeOne decodes data into a document node and checks that it is the
// only document and that its top level is a mapping.
func decodeOne(data []byte) (*yaml.Node, error) {
	// Decoding into a yaml.Node keeps line numbers and lets variables be
	// expanded inside scalars before anything is typed. yaml.v3 applies
	// KnownFields only when decoding text, not a Node, so unknown keys
	// are found by walker instead.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "no configuration: the file holds no YAML document"}
		}
		return nil, yamlProblems(err, nil)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlProblems(err, nil)
	default:
		return nil, &Error{Line: next.Line, Msg: "a second YAML document: a configuration file holds exactly one"}
	}
	if len(doc.Content) != 1 {
		return nil, &Error{Msg: "no configuration: the document is empty"}
	}
	top := doc.Content[0]
	if top.Kind == yaml.AliasNode && top.Alias != nil {
		top = top.Alias
	}
	if top.Kind != yaml.MappingNode {
		if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
			return nil, &Error{Msg: "no configuration: the document is empty"}
		}
		return nil, &Error{Line: top.Line, Msg: "the top level must be a mapping of sections, such as log: and inventory:"}
	}
	return &doc, nil
}

var (
	yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	// quoted matches the values yaml and Duration quote in messages.
	quoted = regexp.MustCompile("`[^`]*`|\"(?:[^\"\\\\]|\\\\.)*\"")
)

// yamlProblems turns an error of the yaml package into *Error values with
// line numbers: "yaml: line 3: did not find expected key" and every line
// of a *yaml.TypeError. pathAt, when not nil, names the key on a line and
// tells whether a value there came from the environment: such values are
// cut out of the message, since they may be secrets.
func yamlProblems(err error, pathAt func(line int) (string, bool)) error {
	var lines []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = []string{err.Error()}
	}
	errs := make([]error, 0, len(lines))
	for _, l := range lines {
		e := &Error{Msg: strings.TrimPrefix(l, "yaml: ")}
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = typeHint(m[2])
			if pathAt != nil {
				var secret bool
				e.Path, secret = pathAt(e.Line)
				if secret {
					e.Msg = quoted.ReplaceAllLiteralString(e.Msg, "(value from the environment)")
				}
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// unmarshalMsg matches yaml's message for a value of the wrong type.
var unmarshalMsg = regexp.MustCompile("^cannot unmarshal !!\\w+(?: `[^`]*`)? into (\\[\\])?(\\S+)$")

// typeHint adds what to write instead to yaml's message for a value of
// the wrong type: "cannot unmarshal !!str `lots` into int: write a whole
// number, such as 10".
func typeHint(msg string) string {
	m := unmarshalMsg.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var want string
	switch t := m[2]; {
	case m[1] != "":
		want = "a list, such as [a, b] or one \"- item\" per line"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		want = "a whole number, such as 10"
	case strings.HasPrefix(t, "float"):
		want = "a number, such as 0.5"
	case t == "bool":
		want = "true or false"
	case t == "string", strings.HasPrefix(t, "config.") && !strings.Contains(t, "map"):
		if t == "string" {
			want = "a single value (quote it if it holds : or #)"
		} else {
			want = "a mapping of keys (docs/configuration.md lists them)"
		}
	case strings.HasPrefix(t, "map["):
		want = "a mapping of keys to values"
	default:
		return msg
	}
	return msg + ": write " + want
}

func lineOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}

// Check is Load followed by ValidateFor(c, roles) (Validate when roles is
// 0), for waitroom check-config and serve, except that it goes on past
// problems as far as it can, so that one run reports every problem in the
// file: an unset variable, an unknown key or a value of the wrong type
// does not hide what validation finds elsewhere. It returns the Config
// only when there is no problem at all.
//
// Problems come in line order, each with the file and its key path;
// validation problems get the line of their key, or of the nearest
// enclosing key or list element the file has (a key left out has no line
// of its own). A problem that only follows from another one is left out:
// validation of a value that did not decode, or whose variable is unset,
// and decoding of a value whose reference could not be expanded.
func Check(path string, roles Role) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := CheckData(data, os.LookupEnv, roles)
	return c, InFile(path, err)
}

// CheckData is Check for a file's contents, with lookupEnv in place of
// os.LookupEnv (nil: every variable unset).
func CheckData(data []byte, lookupEnv func(string) (string, bool), roles Role) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	doc, err := decodeOne(data)
	if err != nil {
		return nil, err // nothing to go on with
	}
	w := walker{lookupEnv: lookupEnv, seen: make(map[walkKey]bool)}
	w.walk(doc.Content[0], configType, "")
	errs := Problems(errors.Join(w.errs...))
	c := Default()
	if err := doc.Decode(c); err != nil {
		bad := maps.Clone(w.badLines)
		if bad == nil {
			bad = make(map[int]bool)
		}
		for _, p := range Problems(yamlProblems(err, w.pathAt)) {
			if p.Line > 0 && w.badLines[p.Line] {
				continue // the unexpanded ${NAME}, reported already
			}
			errs = append(errs, p)
			bad[p.Line] = true
		}
		// yaml.v3 drops a whole list element (an origin, an event) when
		// one of its values has the wrong type, and stops at the first
		// error that is not a type error: decode again without the values
		// that failed, so that validation sees everything else. What the
		// second decoding finds was reported by the first.
		prune(doc, bad)
		c = Default()
		doc.Decode(c)
	}
	var verr error
	if roles == 0 {
		verr = Validate(c)
	} else {
		verr = ValidateFor(c, roles)
	}
	broken := errs
	for _, p := range Problems(verr) {
		if followsFrom(p.Path, broken) {
			continue
		}
		if p.Line == 0 {
			p.Line = w.lineOfPath(p.Path)
		}
		errs = append(errs, p)
	}
	if len(errs) == 0 {
		return c, nil
	}
	// In line order; problems without a line (a section the file leaves
	// out) last.
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Compare(uint(a.Line-1), uint(b.Line-1))
	})
	out := make([]error, len(errs))
	for i, p := range errs {
		out[i] = p
	}
	return nil, errors.Join(out...)
}

// prune removes from n the keys and list elements whose value is a
// scalar on one of lines, or a collection that starts on one of them on
// its key's line and has nothing inside it to remove ("tls: [x]"). It
// reports whether it removed anything. Aliases are not followed.
func prune(n *yaml.Node, lines map[int]bool) bool {
	removed := false
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			removed = prune(c, lines) || removed
		}
	case yaml.MappingNode:
		kept := make([]*yaml.Node, 0, len(n.Content))
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			inner := v.Kind != yaml.AliasNode && prune(v, lines)
			if !inner && lines[v.Line] && (v.Kind == yaml.ScalarNode || v.Line == k.Line) {
				removed = true
				continue
			}
			removed = removed || inner
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		kept := make([]*yaml.Node, 0, len(n.Content))
		for _, c := range n.Content {
			inner := c.Kind != yaml.AliasNode && prune(c, lines)
			if !inner && lines[c.Line] && c.Kind == yaml.ScalarNode {
				removed = true
				continue
			}
			removed = removed || inner
			kept = append(kept, c)
		}
		n.Content = kept
	}
	return removed
}

// followsFrom reports whether a validation problem at path may only
// follow from one of the problems found before validation: at the same
// key, inside it, or around it.
func followsFrom(path string, before []*Error) bool {
	if path == "" {
		return false
	}
	within := func(inner, outer string) bool {
		return strings.HasPrefix(inner, outer) && len(inner) > len(outer) && (inner[len(outer)] == '.' || inner[len(outer)] == '[')
	}
	for _, b := range before {
		if b.Path != "" && (b.Path == path || within(path, b.Path) || within(b.Path, path)) {
			return true
		}
	}
	return false
}
