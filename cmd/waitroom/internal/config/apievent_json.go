package config

import (
	"encoding/json"
	"strings"

	"go.yaml.in/yaml/v3"
)

// APIEventJSON writes e as the JSON record ParseAPIEvent reads back to
// e ({"event":{...},"routes":[]}), with the file's values as they are in
// force (variables expanded): an event of the file changed through the
// operator API starts from it.
func APIEventJSON(e Event) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(APIEvent{Event: e, Routes: []Route{}}); err != nil {
		return nil, err
	}
	return json.Marshal(nodeValue(&n))
}

// nodeValue is n as JSON values: numbers and booleans by their YAML
// tag, every other scalar a string (so that an instant stays its text).
func nodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return nodeValue(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, nodeValue(c))
		}
		return l
	case yaml.AliasNode:
		return nodeValue(n.Alias)
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		return strings.EqualFold(n.Value, "true")
	case "!!int", "!!float":
		return json.Number(n.Value)
	}
	return n.Value
}
