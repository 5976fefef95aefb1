package plugins

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/registry"
)

// Factory makes instances of one plugin from its config section.
// Factories are registered once at init and are safe for concurrent use.
type Factory[T any] interface {
	// Validate checks the plugin's config section without side effects.
	// It returns nil or every problem found, each a *FieldError whose path
	// is relative to the section ("secret", "hostnames[1]").
	Validate(raw *yaml.Node) error
	// Build makes an instance from a section Validate accepted.
	Build(ctx context.Context, raw *yaml.Node, env Env) (T, error)
}

// Env is what a plugin instance may use from the process that builds it.
type Env struct {
	// Log is the process's logger (never nil when built by waitroom).
	Log *slog.Logger
	// Replay remembers one-time values shared by every replica (CAPTCHA
	// tokens are single use); nil when the process has none.
	Replay challenge.ReplayGuard
}

// Registry is the set of plugins of one extension point, by name. Safe
// for concurrent use.
type Registry[T any] struct {
	point  string
	byName *registry.Registry[Factory[T]]
}

// NewRegistry returns an empty registry for the extension point named
// point (used in messages).
func NewRegistry[T any](point string) *Registry[T] {
	return &Registry[T]{point: point, byName: registry.New[Factory[T]]("plugins: " + point + " plugin")}
}

// Register adds a plugin. It panics when name is empty or already taken:
// two plugins claiming one name is a programming error.
func (r *Registry[T]) Register(name string, f Factory[T]) { r.byName.Register(name, f) }

// Names lists the registered plugins, sorted.
func (r *Registry[T]) Names() []string { return r.byName.Names() }

func (r *Registry[T]) lookup(name string) (Factory[T], error) {
	f, ok := r.byName.Lookup(name)
	if !ok {
		return nil, &FieldError{Path: "type", Msg: fmt.Sprintf("unknown %s plugin %q (known: %s)", r.point, name, strings.Join(r.Names(), ", "))}
	}
	return f, nil
}

// Validate checks raw as the config of the plugin named name. Errors are
// *FieldError with paths relative to the plugin's section.
func (r *Registry[T]) Validate(name string, raw *yaml.Node) error {
	f, err := r.lookup(name)
	if err != nil {
		return err
	}
	return f.Validate(orEmpty(raw))
}

// Build validates raw and makes an instance of the plugin named name.
func (r *Registry[T]) Build(ctx context.Context, name string, raw *yaml.Node, env Env) (T, error) {
	var zero T
	f, err := r.lookup(name)
	if err != nil {
		return zero, err
	}
	raw = orEmpty(raw)
	if err := f.Validate(raw); err != nil {
		return zero, err
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	return f.Build(ctx, raw, env)
}

// orEmpty is raw, or an empty mapping when the section was left out.
func orEmpty(raw *yaml.Node) *yaml.Node {
	if raw == nil || raw.Kind == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	return raw
}

// FieldError is one problem in a plugin's config section: Path is the
// field within the section, such as "hostnames[1]" ("" for the section
// itself), Msg what is wrong. It is the registry's, shared with the store
// backends.
type FieldError = registry.FieldError

// Fail returns a *FieldError for path.
func Fail(path, format string, args ...any) *FieldError {
	return registry.Fail(path, format, args...)
}

// FieldErrors flattens err (a *FieldError or an errors.Join of them, as
// Validate returns) into its field errors; any other error becomes one
// with an empty path.
func FieldErrors(err error) []*FieldError { return registry.FieldErrors(err) }

// Decode decodes a config section into v, strictly: a key v has no field
// for is an error (a typo must not silently fall back to a default).
func Decode(raw *yaml.Node, v any) error {
	raw = orEmpty(raw)
	out, err := yaml.Marshal(raw)
	if err != nil {
		return &FieldError{Msg: "cannot read the section: " + err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return &FieldError{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return nil
}
