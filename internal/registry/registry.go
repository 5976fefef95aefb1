package registry

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Registry maps names to factories of one extension point. Register is
// called from init functions; Lookup and Names at any time after. Safe
// for concurrent use.
type Registry[F any] struct {
	point  string
	mu     sync.RWMutex
	byName map[string]F
}

// New returns an empty registry; point names the extension point in
// panic messages ("admission store").
func New[F any](point string) *Registry[F] {
	return &Registry[F]{point: point, byName: map[string]F{}}
}

// Register adds f under name. It panics when name is empty, f is nil or
// name is taken: two extensions claiming one name is a programming error,
// found when the program starts.
func (r *Registry[F]) Register(name string, f F) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" || any(f) == nil {
		panic(fmt.Sprintf("%s registered without a name or factory", r.point))
	}
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("%s %q registered twice", r.point, name))
	}
	r.byName[name] = f
}

// Lookup returns the factory registered under name, and whether there is
// one.
func (r *Registry[F]) Lookup(name string) (F, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.byName[name]
	return f, ok
}

// Names lists the registered names, sorted.
func (r *Registry[F]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// FieldError is one problem in an extension's configuration, found by
// validation. Plain data.
type FieldError struct {
	// Path of the field relative to the extension's section, such as
	// "hostnames[1]" or "data_dir"; "" for the section itself.
	Path string
	// What is wrong.
	Msg string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Fail returns a *FieldError for path.
func Fail(path, format string, args ...any) *FieldError {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// FieldErrors flattens err (a *FieldError or an errors.Join of them, as
// validation returns) into its field errors; any other error becomes one
// with an empty path.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range j.Unwrap() {
			out = append(out, FieldErrors(e)...)
		}
		return out
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return []*FieldError{{Msg: err.Error()}}
}

// SettingError is a start-up failure that one setting of an extension's
// section explains: a data directory that is locked, a Redis that does
// not answer. The wiring puts the section's key in front of Key. Plain
// data.
type SettingError struct {
	// Key of the setting relative to the section: "data_dir",
	// "redis.url".
	Key string
	// Value of the setting, when showing it reveals no secret (a
	// directory, a host:port); empty otherwise.
	Value string
	// Err is the cause.
	Err error
}

func (e *SettingError) Error() string {
	s := e.Key
	if e.Value != "" {
		s += " " + e.Value
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause, for errors.Is.
func (e *SettingError) Unwrap() error { return e.Err }
