package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
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
			e.Msg = m[2]
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

func lineOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}
