package memstore

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
)

// Name is the backend's name in challenge.ReplayStores, the embedded
// admission store's: the guard lives in this process.
const Name = "embedded"

func init() { challenge.ReplayStores.Register(Name, factory{}) }

// factory builds Guards remembering ids for the config's Window.
type factory struct{}

func (factory) Build(_ context.Context, c challenge.ReplayStoreConfig) (challenge.ReplayGuard, error) {
	return New(Options{Window: c.Window}), nil
}

var _ challenge.ReplayStoreFactory = factory{}
