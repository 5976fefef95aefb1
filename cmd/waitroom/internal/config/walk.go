package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	configType      = reflect.TypeFor[Config]()
	nodeType        = reflect.TypeFor[yaml.Node]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// fieldDecoders are the struct types whose UnmarshalYAML only fills in
// defaults and then decodes the mapping field by field (see
// decodeMapping): the walker checks their keys like any other struct's.
var fieldDecoders = map[reflect.Type]bool{
	reflect.TypeFor[Key]():            true,
	reflect.TypeFor[Origin]():         true,
	reflect.TypeFor[Event]():          true,
	reflect.TypeFor[EventChallenge](): true,
}

// walker goes over a parsed document beside the Go type it will be
// decoded into. It reports keys that type does not have and expands
// environment variable references in scalar values, in place.
type walker struct {
	lookupEnv func(string) (string, bool)
	// seen holds the (node, type) pairs already walked, so that a node
	// reached again through aliases is walked once per type and an alias
	// bomb costs no more than its text.
	seen map[walkKey]bool
	// paths maps a line to the key path of the value on it, for naming
	// the key in decoding errors, which know only the line.
	paths map[int]linePath
	errs  []error
	// badRefs is set when a variable reference failed; the document then
	// holds unexpanded text that decoding would report again, wrongly.
	badRefs bool
	// badLines are the lines of the values whose references failed.
	badLines map[int]bool
	// keyLines maps a key path ("events[0].mode", "events[0]") to the
	// line of its key or list element, for placing problems found after
	// decoding, which know only the path.
	keyLines map[string]int
	// literal takes values as written: no variable is expanded (input
	// that does not come from the operator's file, see ParseAPIEvent).
	literal bool
}

// noteKey records that the key or list element at path is on line; the
// first place wins (a merge or an alias can reach a path twice).
func (w *walker) noteKey(path string, line int) {
	if w.keyLines == nil {
		w.keyLines = make(map[string]int)
	}
	if _, ok := w.keyLines[path]; !ok {
		w.keyLines[path] = line
	}
}

// lineOfPath returns the line of path's key in the document or, for a
// key the document leaves out, of the nearest enclosing key or list
// element it has; 0 when none.
func (w *walker) lineOfPath(path string) int {
	for path != "" {
		if l, ok := w.keyLines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

type linePath struct {
	path      string
	scalar    bool
	ambiguous bool
	expanded  bool // a value on the line came from the environment
}

// note records that the value at path, node n, is on n's line. Nodes
// come parent first, so a later collection on the same line is nested
// in the earlier one and is the better guess; a scalar wins over
// collections, and two scalars make the line ambiguous.
func (w *walker) note(n *yaml.Node, path string) {
	if w.paths == nil {
		w.paths = make(map[int]linePath)
	}
	scalar := n.Kind == yaml.ScalarNode
	old, ok := w.paths[n.Line]
	switch {
	case !ok, !old.scalar:
		w.paths[n.Line] = linePath{path: path, scalar: scalar, expanded: old.expanded}
	case scalar && old.path != path:
		old.ambiguous = true
		w.paths[n.Line] = old
	}
}

// pathAt returns the key path of the value on line, or "", and whether a
// value on the line came from the environment (and so must not be shown).
func (w *walker) pathAt(line int) (path string, expanded bool) {
	lp, ok := w.paths[line]
	if ok && !lp.ambiguous {
		path = lp.path
	}
	return path, lp.expanded
}

type walkKey struct {
	n *yaml.Node
	t reflect.Type
}

func (w *walker) fail(line int, path, format string, args ...any) {
	w.errs = append(w.errs, errorf(line, path, format, args...))
}

// walk checks n, to be decoded into a value of type t at path.
func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k := walkKey{n, t}
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	w.note(n, path)

	if t == nodeType || t.Kind() == reflect.Interface {
		// Raw YAML, kept for someone else to decode: no keys to check,
		// but its values are expanded like every other.
		w.expandAll(n, path)
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		w.expand(n, path)
		if isInteger(t) && n.ShortTag() == "!!float" {
			// yaml.v3 would quietly drop the fraction.
			w.fail(n.Line, path, "must be a whole number")
		}
	case yaml.MappingNode:
		if reflect.PointerTo(t).Implements(unmarshalerType) && !fieldDecoders[t] {
			return // a type that reads itself; it reports what it dislikes
		}
		switch t.Kind() {
		case reflect.Struct:
			w.structMapping(n, t, path)
		case reflect.Map:
			for i := 0; i+1 < len(n.Content); i += 2 {
				w.noteKey(joinPath(path, n.Content[i].Value), n.Content[i].Line)
				w.walk(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value))
			}
		}
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				w.noteKey(p, c.Line)
				if c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null" {
					// yaml.v3 would drop the element without a word.
					w.fail(c.Line, p, "an empty list element: fill it in or remove its -")
					continue
				}
				w.walk(c, t.Elem(), p)
			}
		}
	}
	// Any other pairing of node and type is a type error that decoding
	// reports with its line.
}

// structMapping checks a mapping's keys against the fields of struct t.
func (w *walker) structMapping(n *yaml.Node, t reflect.Type, path string) {
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind == yaml.ScalarNode && key.ShortTag() == "!!merge" {
			w.merge(val, t, path)
			continue
		}
		if key.Kind != yaml.ScalarNode {
			w.fail(key.Line, path, "a key must be a plain name")
			continue
		}
		ft, ok := fields.types[key.Value]
		w.noteKey(joinPath(path, key.Value), key.Line)
		if !ok {
			w.fail(key.Line, joinPath(path, key.Value), "unknown key; %s", fields.suggest(key.Value))
			continue
		}
		w.walk(val, ft, joinPath(path, key.Value))
	}
}

// merge checks the value of a "<<" merge key: a mapping, or a sequence of
// mappings, merged into the struct at path.
func (w *walker) merge(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			w.walk(c, t, path)
		}
		return
	}
	w.walk(n, t, path)
}

// expandAll expands every scalar value under n (not mapping keys).
func (w *walker) expandAll(n *yaml.Node, path string) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		w.expand(n, path) // which marks n seen itself
		return
	}
	k := walkKey{n, nil}
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.expandAll(n.Content[i+1], joinPath(path, n.Content[i].Value))
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for i, c := range n.Content {
			w.expandAll(c, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// expand replaces the variable references in scalar n's value, once
// however often n is reached (through aliases, or under several types):
// expanding twice would turn "$$$${X}" into a reference.
func (w *walker) expand(n *yaml.Node, path string) {
	k := walkKey{n, nil}
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	if w.literal || !strings.Contains(n.Value, "$") {
		return
	}
	v, errs := expandVars(n.Value, w.lookupEnv, secretKeyPath(path))
	for _, msg := range errs {
		w.fail(n.Line, path, "%s", msg)
		w.badRefs = true
		if w.badLines == nil {
			w.badLines = make(map[int]bool)
		}
		w.badLines[n.Line] = true
	}
	if len(errs) > 0 || v == n.Value {
		return
	}
	n.Value = v
	lp := w.paths[n.Line]
	lp.expanded = true
	w.paths[n.Line] = lp
	if n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return // a string whatever it holds
	}
	// A plain scalar is typed by what it holds, so ${BATCH:-500} can fill
	// an integer. Only numbers and booleans are taken from a variable; any
	// other value (including "", "null", "~" and "<<") stays a string.
	n.Tag = ""
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool", "!!str":
	default:
		n.Tag = "!!str"
	}
}

// expandVars replaces ${NAME} and ${NAME:-default} in s with values from
// lookupEnv, and $$ with $. It returns a message for each bad reference;
// for an unset variable in a secret's value (secret) the message says how
// to make one. Values are inserted as they are: they are never expanded
// again.
func expandVars(s string, lookupEnv func(string) (string, bool), secret bool) (string, []string) {
	var b strings.Builder
	var errs []string
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			b.WriteByte('$')
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			errs = append(errs, "a lone $: write $$ for a literal $, or ${NAME} for an environment variable")
			b.WriteByte('$')
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			errs = append(errs, "${ without a closing }: write ${NAME}, or $$ for a literal $")
			break
		}
		ref := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			errs = append(errs, fmt.Sprintf("bad reference ${%s}: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _", ref))
			continue
		}
		v, ok := lookupEnv(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok && secret:
			errs = append(errs, fmt.Sprintf("environment variable %s is not set: make a secret with export %s=\"$(openssl rand -hex 32)\" (and keep it)", name, name))
		case !ok:
			errs = append(errs, fmt.Sprintf("environment variable %s is not set (set it, or give a fallback: ${%s:-default})", name, name))
		}
		b.WriteString(v)
	}
	return b.String(), errs
}

// secretKeyPath reports whether the key at path holds a secret that
// should be random (a token or signing secret; not a password, which
// someone else chose).
func secretKeyPath(path string) bool {
	if strings.HasPrefix(path, "bot_defence.captcha") {
		return false // a CAPTCHA provider's secret comes from its dashboard
	}
	key := path[strings.LastIndexByte(path, '.')+1:]
	switch key {
	case "secret", "token", "api_token", "invite_secret", "account_secret":
		return true
	}
	return false
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return !reflect.PointerTo(t).Implements(unmarshalerType)
	}
	return false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldSet is the YAML keys of a struct type.
type fieldSet struct {
	types map[string]reflect.Type
	names []string // in declaration order
}

// yamlFields returns the keys yaml.v3 decodes into struct t, following its
// rules: the yaml tag's name, else the lower-cased field name; "-" is
// skipped and ",inline" structs contribute their own keys.
func yamlFields(t reflect.Type) fieldSet {
	fs := fieldSet{types: make(map[string]reflect.Type)}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct {
				add(f.Type)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fs.types[name] = f.Type
			fs.names = append(fs.names, name)
		}
	}
	add(t)
	return fs
}

// suggest names the known key closest to an unknown one, or lists them.
func (fs fieldSet) suggest(key string) string {
	best, bestD := "", 3
	for _, n := range fs.names {
		if d := editDistance(strings.ToLower(key), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %s?", best)
	}
	names := append([]string(nil), fs.names...)
	sort.Strings(names)
	return "known keys here: " + strings.Join(names, ", ")
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
