package config

import (
	"errors"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// APIEvent is an event made or replaced through the operator API
// (POST /admin/v1/events, PATCH /admin/v1/events/{id}), in JSON: the
// event with the keys of an entry of events, and the routes that gate
// paths with it, with the keys of an entry of routes.
type APIEvent struct {
	// The event.
	Event Event `yaml:"event"`
	// Routes that send visitors of these paths to the event's waiting
	// room (queue) or refuse them without a pass (block). Each names the
	// event or leaves event empty (then it is the event's); they join the
	// file's routes, after them.
	Routes []Route `yaml:"routes"`
}

var apiEventType = reflect.TypeFor[APIEvent]()

// noLines drops the line numbers of err's problems.
func noLines(err error) error {
	ps := Problems(err)
	if len(ps) == 0 {
		return err
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		q := *p
		q.Line = 0
		errs[i] = &q
	}
	return errors.Join(errs...)
}

// ParseAPIEvent reads an APIEvent as strictly as the file's entries
// (unknown keys, repeated keys and values of the wrong type are errors,
// every problem is listed with its key path), from JSON or YAML. Values
// are taken as written: no variable is expanded, since the text does not
// come from the operator's file. The event starts from DefaultEvent, as
// an entry of the file's events does. Problems name key paths, not lines
// (a JSON body is often one line).
func ParseAPIEvent(data []byte) (*APIEvent, error) {
	doc, err := decodeOne(data)
	if err != nil {
		return nil, noLines(err)
	}
	// Written out again in block style, each value has a line of its
	// own, which is how problems found while decoding get their key
	// path.
	blockStyle(doc)
	block, err := yaml.Marshal(doc)
	if err != nil {
		return nil, &Error{Msg: "the body cannot be read as one JSON object"}
	}
	if doc, err = decodeOne(block); err != nil {
		return nil, noLines(err)
	}
	w := walker{literal: true, seen: make(map[walkKey]bool)}
	w.walk(doc.Content[0], apiEventType, "")
	if len(w.errs) > 0 {
		return nil, noLines(errors.Join(w.errs...))
	}
	a := &APIEvent{Event: DefaultEvent()}
	if err := doc.Decode(a); err != nil {
		return nil, noLines(yamlProblems(err, w.pathAt))
	}
	for i := range a.Routes {
		switch r := &a.Routes[i]; {
		case r.Event == "":
			r.Event = a.Event.ID
		case r.Event != a.Event.ID:
			return nil, &Error{Path: fmt.Sprintf("routes[%d].event", i), Msg: fmt.Sprintf("must be %q, the event's id, or empty", a.Event.ID)}
		}
	}
	return a, nil
}

// blockStyle turns the collections under n into block style (JSON's are
// flow style: one line).
func blockStyle(n *yaml.Node) {
	if n == nil || n.Kind == yaml.AliasNode {
		return
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style &^= yaml.FlowStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
