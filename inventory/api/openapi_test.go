package api

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/inventory"
)

type openAPIDoc struct {
	OpenAPI    string                          `yaml:"openapi"`
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]struct {
				Enum []string `yaml:"enum"`
			} `yaml:"properties"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

// TestOpenAPIMatchesRouter holds the document to the router: the same
// paths, the same methods, and every error code of the status table.
func TestOpenAPIMatchesRouter(t *testing.T) {
	var doc openAPIDoc
	if err := yaml.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi version %q, want 3.1.x", doc.OpenAPI)
	}
	httpMethods := []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}
	docRoutes := map[string][]string{}
	for path, item := range doc.Paths {
		for key := range item {
			if slices.Contains(httpMethods, key) {
				docRoutes[path] = append(docRoutes[path], strings.ToUpper(key))
			}
		}
		sort.Strings(docRoutes[path])
	}
	codeRoutes := map[string][]string{}
	for _, r := range newRoutes() {
		for _, e := range r.endpoints {
			codeRoutes[r.pattern] = append(codeRoutes[r.pattern], e.method)
		}
		sort.Strings(codeRoutes[r.pattern])
	}
	for path, methods := range codeRoutes {
		if !slices.Equal(docRoutes[path], methods) {
			t.Errorf("%s: router serves %v, the document describes %v", path, methods, docRoutes[path])
		}
	}
	for path, methods := range docRoutes {
		if _, ok := codeRoutes[path]; !ok {
			t.Errorf("%s %v is in the document but not in the router", path, methods)
		}
	}

	// Every error code the server can answer with is in the document's enum.
	enum := doc.Components.Schemas["Error"].Properties["error"].Enum
	var table []string
	for _, e := range errorStatus {
		table = append(table, e.code)
	}
	sort.Strings(enum)
	sort.Strings(table)
	if !slices.Equal(enum, table) {
		t.Errorf("Error.error enum %v\ndiffers from the status table %v", enum, table)
	}
	// And every status of the table is in the enum's description.
	for _, e := range errorStatus {
		if !strings.Contains(string(OpenAPI), e.code) {
			t.Errorf("code %s is not documented", e.code)
		}
	}
}

// TestStatusTableCoversEverySentinel: each store code has a status, and
// each store code in the table is a real sentinel's.
func TestStatusTableCoversEverySentinel(t *testing.T) {
	sentinels := []error{inventory.ErrInvalid, inventory.ErrEventNotFound, inventory.ErrSectionNotFound, inventory.ErrTierNotFound,
		inventory.ErrPoolNotFound, inventory.ErrSeatNotFound, inventory.ErrHoldNotFound, inventory.ErrOrderNotFound,
		inventory.ErrSeatUnavailable, inventory.ErrSoldOut, inventory.ErrNotEnoughSeats, inventory.ErrUserLimit,
		inventory.ErrHoldExpired, inventory.ErrHoldReleased, inventory.ErrHoldConfirmed, inventory.ErrOrderCancelled,
		inventory.ErrIdempotencyMismatch, inventory.ErrDefinitionConflict, inventory.ErrUnavailable}
	for _, s := range sentinels {
		code := inventory.Code(s)
		found := false
		for _, e := range errorStatus {
			found = found || e.code == code
		}
		if code == "" || !found {
			t.Errorf("sentinel %v (code %q) has no status", s, code)
		}
	}
	seen := map[string]bool{}
	for _, e := range errorStatus {
		if seen[e.code] {
			t.Errorf("code %s listed twice", e.code)
		}
		seen[e.code] = true
		if e.status < 400 || e.status > 599 {
			t.Errorf("code %s has status %d", e.code, e.status)
		}
	}
}
