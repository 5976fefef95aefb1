package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// openAPIDoc is the part of the OpenAPI document the test reads.
type openAPIDoc struct {
	OpenAPI    string                                 `json:"openapi"`
	Security   []map[string][]string                  `json:"security"`
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		Schemas   map[string]any             `json:"schemas"`
		Responses map[string]openAPIResponse `json:"responses"`
	} `json:"components"`
}

type openAPIOperation struct {
	OperationID string                     `json:"operationId"`
	Security    *[]map[string][]string     `json:"security"`
	Parameters  []map[string]any           `json:"parameters"`
	RequestBody *openAPIBody               `json:"requestBody"`
	Responses   map[string]openAPIResponse `json:"responses"`
}

type openAPIBody struct {
	Required bool                        `json:"required"`
	Content  map[string]openAPIMediaType `json:"content"`
}

type openAPIResponse struct {
	Ref     string                      `json:"$ref"`
	Content map[string]openAPIMediaType `json:"content"`
}

type openAPIMediaType struct {
	Schema  map[string]any  `json:"schema"`
	Example json.RawMessage `json:"example"`
}

var httpMethods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

// TestOpenAPI holds /admin/v1/openapi.json to the handlers: it is the
// embedded document, OpenAPI 3.1 with every reference resolving; every
// route the admin mux registers is documented and every documented
// path and method is registered; each operation's example body is taken
// (answered with a documented status, not 400/415/422) and the answer
// matches the documented schema (no undocumented fields either); a
// malformed body, a body of another media type and a missing token get
// the documented errors.
func TestOpenAPI(t *testing.T) {
	r := newRig(t)
	h, err := r.p.Admin(adminOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	base := serveAdmin(t, h)
	r.tick(t, 20*time.Second)

	code, raw := adminRaw(t, "GET", base+"/admin/v1/openapi.json", adminToken, "", "")
	if code != 200 || string(raw) != string(openAPI) {
		t.Fatalf("GET openapi.json: %d, %d bytes (embedded: %d)", code, len(raw), len(openAPI))
	}
	var doc openAPIDoc
	d := json.NewDecoder(strings.NewReader(string(raw)))
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var whole any
	json.Unmarshal(raw, &whole)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	checkRefs(t, whole, whole)

	// Routes: registered ⇔ documented.
	registered := map[string]bool{}
	for _, p := range h.(*routeMux).patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			continue // the catch-all 404
		}
		registered[strings.ToLower(method)+" "+path] = true
	}
	documented := map[string]bool{}
	ids := map[string]bool{}
	for path, item := range doc.Paths {
		for method, op := range item {
			if !slices.Contains(httpMethods, method) {
				continue
			}
			documented[method+" "+path] = true
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s %s: operationId %q missing or repeated", method, path, op.OperationID)
			}
			ids[op.OperationID] = true
			if strings.Contains(path, "{id}") && !hasPathParam(doc, op, "id") {
				t.Errorf("%s %s: the id path parameter is not declared", method, path)
			}
		}
	}
	for k := range registered {
		if !documented[k] {
			t.Errorf("route %s is registered but not in the OpenAPI document", k)
		}
	}
	for k := range documented {
		if !registered[k] {
			t.Errorf("%s is in the OpenAPI document but not registered", k)
		}
	}

	// Each operation, against the handlers. Changes first in the
	// document's order of paths (sorted), reads after.
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		method, path, _ := strings.Cut(k, " ")
		op := doc.Paths[path][method]
		url := base + strings.ReplaceAll(path, "{id}", "show")
		t.Run(k, func(t *testing.T) {
			var body string
			if op.RequestBody != nil {
				mt, ok := op.RequestBody.Content["application/json"]
				if !ok || len(mt.Example) == 0 {
					t.Fatalf("the request body has no application/json example")
				}
				body = string(mt.Example)
				if err := validate(doc, mt.Schema, decodeAny(t, mt.Example), "example", true); err != nil {
					t.Fatalf("the example does not match its own schema: %v", err)
				}
			}
			code, got := adminRaw(t, strings.ToUpper(method), url, adminToken, body, "application/json")
			if code == 400 || code == 415 || code == 422 {
				t.Fatalf("the example was refused: %d %s", code, got)
			}
			checkAnswer(t, doc, op, code, got)

			secured := op.Security == nil || len(*op.Security) > 0
			if secured {
				code, got := adminRaw(t, strings.ToUpper(method), url, "", body, "application/json")
				if code != 401 {
					t.Fatalf("without a token: %d", code)
				}
				checkAnswer(t, doc, op, code, got)
			}
			if op.RequestBody == nil {
				return
			}
			for _, bad := range []struct {
				body, ctype string
				want        int
			}{
				{`{"not_a_field":`, "application/json", 400},
				{`{"not_a_field":1}`, "application/json", 400},
				{body, "text/plain", 415},
			} {
				code, got := adminRaw(t, strings.ToUpper(method), url, adminToken, bad.body, bad.ctype)
				if code != bad.want {
					t.Fatalf("%s body %s: %d %s, want %d", bad.ctype, bad.body, code, got, bad.want)
				}
				checkAnswer(t, doc, op, code, got)
			}
		})
	}
}

// checkAnswer checks that status is documented for op and the body
// matches its schema.
func checkAnswer(t *testing.T, doc openAPIDoc, op openAPIOperation, status int, body []byte) {
	t.Helper()
	resp, ok := op.Responses[strconv.Itoa(status)]
	if !ok {
		t.Fatalf("answered %d, which is not documented: %s", status, body)
	}
	if name, ok := strings.CutPrefix(resp.Ref, "#/components/responses/"); ok {
		resp = doc.Components.Responses[name]
	}
	mt, ok := resp.Content["application/json"]
	if !ok {
		return // text
	}
	if err := validate(doc, mt.Schema, decodeAny(t, body), "answer", true); err != nil {
		t.Fatalf("the %d answer does not match the document: %v\n%s", status, err, body)
	}
}

func hasPathParam(doc openAPIDoc, op openAPIOperation, name string) bool {
	for _, p := range op.Parameters {
		if ref, ok := p["$ref"].(string); ok && ref == "#/components/parameters/EventID" {
			return name == "id"
		}
		if p["in"] == "path" && p["name"] == name && p["required"] == true {
			return true
		}
	}
	return false
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}

// checkRefs fails on a $ref that does not resolve in root.
func checkRefs(t *testing.T, root, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			if resolve(root, ref) == nil {
				t.Errorf("$ref %s does not resolve", ref)
			}
		}
		for _, x := range v {
			checkRefs(t, root, x)
		}
	case []any:
		for _, x := range v {
			checkRefs(t, root, x)
		}
	}
}

func resolve(root any, ref string) any {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	cur := root
	for _, part := range strings.Split(path, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// validate checks v against a JSON Schema, for the keywords the
// document uses. strict also refuses properties an object schema with
// properties does not list (every field answered must be documented).
func validate(doc openAPIDoc, s map[string]any, v any, at string, strict bool) error {
	if ref, ok := s["$ref"].(string); ok {
		name, _ := strings.CutPrefix(ref, "#/components/schemas/")
		target, _ := doc.Components.Schemas[name].(map[string]any)
		if target == nil {
			return fmt.Errorf("%s: $ref %s", at, ref)
		}
		return validate(doc, target, v, at, strict)
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if validate(doc, a.(map[string]any), v, at, strict) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: %v matches %d of oneOf's schemas", at, v, n)
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	switch typ, _ := s["type"].(string); typ {
	case "":
		// Keywords without a type apply to the values of their kind.
		if obj, ok := v.(map[string]any); ok {
			return validateObject(doc, s, obj, at, strict)
		}
	case "null":
		if v != nil {
			return fmt.Errorf("%s: %v is not null", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	case "number", "integer":
		f, ok := v.(float64)
		if !ok || (typ == "integer" && f != float64(int64(f))) {
			return fmt.Errorf("%s: %v is not a %s", at, v, typ)
		}
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v < %v", at, f, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v > %v", at, f, m)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %v is not a string", at, v)
		}
		if err := checkString(s, str, at); err != nil {
			return err
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", at, v)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := validate(doc, items, x, fmt.Sprintf("%s[%d]", at, i), strict); err != nil {
					return err
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, v)
		}
		return validateObject(doc, s, obj, at, strict)
	default:
		return fmt.Errorf("%s: the schema's type %q is not one the test knows", at, typ)
	}
	return nil
}

// validateObject checks an object's keywords.
func validateObject(doc openAPIDoc, s map[string]any, obj map[string]any, at string, strict bool) error {
	for _, req := range asStrings(s["required"]) {
		if _, ok := obj[req]; !ok {
			return fmt.Errorf("%s: %s is required", at, req)
		}
	}
	if m, ok := s["maxProperties"].(float64); ok && float64(len(obj)) > m {
		return fmt.Errorf("%s: more than %v properties", at, m)
	}
	props, _ := s["properties"].(map[string]any)
	for k, x := range obj {
		if names, ok := s["propertyNames"].(map[string]any); ok {
			if err := checkString(names, k, at+" name"); err != nil {
				return err
			}
		}
		if ps, ok := props[k].(map[string]any); ok {
			if err := validate(doc, ps, x, at+"."+k, strict); err != nil {
				return err
			}
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				return fmt.Errorf("%s: %s is not allowed", at, k)
			}
		case map[string]any:
			if err := validate(doc, ap, x, at+"."+k, strict); err != nil {
				return err
			}
		default:
			if strict && props != nil {
				return fmt.Errorf("%s: %s is not documented", at, k)
			}
		}
	}
	return nil
}

func checkString(s map[string]any, str, at string) error {
	n := float64(len([]rune(str)))
	if m, ok := s["minLength"].(float64); ok && n < m {
		return fmt.Errorf("%s: %q is shorter than %v", at, str, m)
	}
	if m, ok := s["maxLength"].(float64); ok && n > m {
		return fmt.Errorf("%s: %q is longer than %v", at, str, m)
	}
	if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
		return fmt.Errorf("%s: %q does not match %s", at, str, p)
	}
	if s["format"] == "date-time" {
		if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
			return fmt.Errorf("%s: %q is not an RFC 3339 time", at, str)
		}
	}
	return nil
}

func asStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// adminRaw sends a request to the admin API and returns the status and
// the body as it came.
func adminRaw(t *testing.T, method, url, token, body, ctype string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
