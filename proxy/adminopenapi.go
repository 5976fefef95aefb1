package proxy

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 description of the operator API, served at
// GET /admin/v1/openapi.json. A test holds it to the handlers: every
// route registered is in it, every path and method in it is registered,
// and its example bodies are taken by the handlers.
//
//go:embed admin_openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", ReferrerPolicy)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPI)
}

// routeMux is a ServeMux that remembers the patterns registered on it,
// so that a test can hold the OpenAPI document to them.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}
