package client_test

import (
	"context"
	"testing"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/inventorytest"
)

// httpStore is what the conformance suite tests: the Go client talking
// over loopback HTTP to a real sidecar (api.Server over a memstore).
//
// Reap is the one method that is not an HTTP endpoint (the sidecar runs
// its own reaper, so client.Client.Reap refuses), yet the suite's Reap
// test needs it; httpStore sends it to the store behind the sidecar,
// which is what the sidecar's reaper would do. Every other method goes
// through HTTP.
type httpStore struct {
	*client.Client
	sc  *sidecar
	dir string
}

func (s *httpStore) Reap(ctx context.Context, event string, max int) (int, error) {
	return s.sc.Store.Reap(ctx, event, max)
}

func newHTTPStore(t *testing.T, dir string) *httpStore {
	t.Helper()
	sc, err := startSidecar(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(sc.URL, sc.Token)
	s := &httpStore{Client: c, sc: sc, dir: dir}
	t.Cleanup(func() {
		c.Close()
		sc.stop()
	})
	return s
}

func TestConformance(t *testing.T) {
	inventorytest.Run(t, inventorytest.Harness{
		New: func(t *testing.T) inventory.Store {
			return newHTTPStore(t, t.TempDir())
		},
		// Reopen restarts the sidecar (server and store) over the same
		// data directory.
		Reopen: func(t *testing.T, s inventory.Store) inventory.Store {
			hs := s.(*httpStore)
			hs.Client.Close()
			hs.sc.stop()
			return newHTTPStore(t, hs.dir)
		},
	})
}
