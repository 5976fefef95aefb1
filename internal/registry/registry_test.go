package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

type factory interface{ Make() string }

type named string

func (n named) Make() string { return string(n) }

func panics(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if s, _ := p.(string); p == nil || !strings.Contains(s, want) {
			t.Errorf("panic %v, want one with %q", p, want)
		}
	}()
	f()
}

func TestRegistry(t *testing.T) {
	r := New[factory]("test store")
	r.Register("redis", named("r"))
	r.Register("embedded", named("e"))
	if got := r.Names(); !slices.Equal(got, []string{"embedded", "redis"}) {
		t.Errorf("Names() = %v", got)
	}
	if f, ok := r.Lookup("redis"); !ok || f.Make() != "r" {
		t.Errorf("Lookup(redis) = %v, %v", f, ok)
	}
	if f, ok := r.Lookup("etcd"); ok || f != nil {
		t.Errorf("Lookup of an unknown name = %v, %v", f, ok)
	}
	panics(t, `test store "redis" registered twice`, func() { r.Register("redis", named("again")) })
	panics(t, "test store registered without a name", func() { r.Register("", named("x")) })
	panics(t, "test store registered without a name or factory", func() { r.Register("nil", nil) })
	if f, _ := r.Lookup("redis"); f.Make() != "r" {
		t.Error("a refused registration replaced the first")
	}
}

func TestErrors(t *testing.T) {
	joined := errors.Join(Fail("data_dir", "must be set with store: %s", "embedded"), errors.New("plain"), nil)
	fes := FieldErrors(joined)
	if len(fes) != 2 || fes[0].Error() != "data_dir: must be set with store: embedded" || fes[1].Path != "" || fes[1].Error() != "plain" {
		t.Errorf("FieldErrors = %v", fes)
	}
	if FieldErrors(nil) != nil {
		t.Error("FieldErrors(nil) is not nil")
	}
	wrapped := fmt.Errorf("wrapped: %w", Fail("", "whole section"))
	if fes := FieldErrors(wrapped); len(fes) != 1 || fes[0].Msg != "whole section" {
		t.Errorf("FieldErrors(wrapped) = %v", fes)
	}
	se := &SettingError{Key: "data_dir", Value: "/var/lib/x", Err: fs.ErrPermission}
	if se.Error() != "data_dir /var/lib/x: permission denied" || !errors.Is(se, fs.ErrPermission) {
		t.Errorf("SettingError %q", se)
	}
	if s := (&SettingError{Key: "redis.url", Err: fs.ErrNotExist}).Error(); s != "redis.url: file does not exist" {
		t.Errorf("SettingError without a value: %q", s)
	}
}
