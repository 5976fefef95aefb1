package proxy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// goErrorMarkers are pieces of the text Go's encoding/json, strconv, net
// and friends put in their errors. None may reach a response.
var goErrorMarkers = []string{"json:", "cannot unmarshal", "invalid character", "unexpected EOF",
	"Go struct", "Go value", "strconv", "looking for beginning", "of type", "admission:", "proxy:",
	"challenge:", "redis", "memstore", "\\u0000", "<script"}

// TestNoGoErrorText sends join bodies built to make the decoder fail in
// every way it can, and checks that each answer's message is one of ours.
func TestNoGoErrorText(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua")
	bodies := map[string]string{
		"syntax":                `{"event":"show",}`,
		"truncated":             `{"event":"sh`,
		"nested wrong type":     `{"event":"show","pow":{"nonces":"x"}}`,
		"number overflow":       `{"event":"show","pow":{"nonces":[1e400]}}`,
		"unknown field escaped": `{"event":"show","\u003cscript\u003e":1}`,
		"unknown field control": `{"event":"show","a\u0000b":1}`,
		"unknown field long":    `{"event":"show","` + strings.Repeat("f", 200) + `":1}`,
		"wrong type top":        `{"event":["show"]}`,
		"not an object":         `"show"`,
		"trailing":              `{"event":"show"} x`,
		"invalid utf8":          "{\"event\":\"\xff\"}",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			resp := v.do(t, "POST", r.url+"/_wr/api/join", body)
			var e struct{ Error, Message string }
			if err := json.Unmarshal([]byte(resp.body), &e); err != nil {
				t.Fatalf("not JSON: %q", resp.body)
			}
			if resp.status < 400 || e.Error == "" || e.Message == "" {
				t.Fatalf("got %d %q", resp.status, resp.body)
			}
			for _, m := range goErrorMarkers {
				if strings.Contains(resp.body, m) {
					t.Errorf("the answer shows %q: %s", m, resp.body)
				}
			}
		})
	}
}

// TestRequestProblem: only a requestError's text is shown; any other
// error gets the fallback.
func TestRequestProblem(t *testing.T) {
	if got := requestProblem(requestError("the body must be one JSON object"), "x"); got != "the body must be one JSON object" {
		t.Errorf("got %q", got)
	}
	if got := requestProblem(errors.New("json: cannot unmarshal number into Go struct field"), "fallback"); got != "fallback" {
		t.Errorf("got %q", got)
	}
	for _, in := range []error{errors.New("json: unknown field \"a\\u0000\""), errors.New("json: unknown field \"<script>\""),
		errors.New("json: unknown field " + strings.Repeat("x", 100)), errors.New("something else entirely")} {
		msg := requestProblem(joinProblem(in), "fallback")
		for _, m := range goErrorMarkers {
			if strings.Contains(msg, m) {
				t.Errorf("joinProblem(%q) shows %q: %q", in, m, msg)
			}
		}
	}
}
