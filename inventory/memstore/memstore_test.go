package memstore_test

import (
	"testing"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/memstore"
)

func open(t *testing.T, dir string) *memstore.Store {
	t.Helper()
	s, err := memstore.Open(memstore.Options{Dir: dir, SnapshotEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dirs := map[inventory.Store]string{}
	inventorytest.Run(t, inventorytest.Harness{
		New: func(t *testing.T) inventory.Store {
			dir := t.TempDir()
			s := open(t, dir)
			dirs[s] = dir
			return s
		},
		Reopen: func(t *testing.T, s inventory.Store) inventory.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			n := open(t, dirs[s])
			dirs[n] = dirs[s]
			return n
		},
	})
}

func TestLinearizable(t *testing.T) {
	s := open(t, t.TempDir())
	for seed := range uint64(3) {
		inventorytest.CheckLinearizable(t, s, inventorytest.LinearizabilityOptions{Clients: 6, OpsPerClient: 50, Seed: seed})
	}
}
