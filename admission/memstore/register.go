package memstore

import (
	"context"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/registry"
)

// Name is the backend's name in admission.Stores: admission.store:
// embedded.
const Name = "embedded"

func init() { admission.Stores.Register(Name, factory{}) }

// factory builds Stores from the admission section: data_dir.
type factory struct{}

func (factory) Validate(c admission.StoreConfig) error {
	if c.DataDir == "" {
		return registry.Fail("data_dir", "must be set with store: %s", Name)
	}
	return nil
}

func (factory) Build(_ context.Context, c admission.StoreConfig) (admission.Store, error) {
	s, err := Open(Options{Dir: c.DataDir, Logger: c.Logger})
	if err != nil {
		return nil, &registry.SettingError{Key: "data_dir", Value: c.DataDir, Err: err}
	}
	return s, nil
}

// Shared is false: one process owns the data directory.
func (factory) Shared() bool { return false }

var _ admission.StoreFactory = factory{}
