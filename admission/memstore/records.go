// Event records: the events made or changed through the operator API,
// kept whole in one file (records.json), written atomically at each
// change. They are few and change rarely.

package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// recordsFile is the records' file in the data directory.
const recordsFile = "records.json"

// records are the event records in memory, as on disk.
type records struct {
	mu     sync.Mutex // serialises changes and their writes
	loaded bool
	byID   map[string]admission.EventRecord
}

// fileRecord is one record as the file keeps it.
type fileRecord struct {
	ID       string `json:"id"`
	Revision uint64 `json:"revision"`
	Body     []byte `json:"body"`
}

// loadRecords reads the records' file (none: no records); under r.mu.
func (s *Store) loadRecords() error {
	r := &s.records
	if r.loaded {
		return nil
	}
	r.byID = map[string]admission.EventRecord{}
	b, err := os.ReadFile(filepath.Join(s.opts.Dir, recordsFile))
	if errors.Is(err, os.ErrNotExist) {
		r.loaded = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	var list []fileRecord
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("memstore: %s: %w", recordsFile, err)
	}
	for _, f := range list {
		r.byID[f.ID] = admission.EventRecord{ID: f.ID, Revision: f.Revision, Body: f.Body}
	}
	r.loaded = true
	return nil
}

// change applies fn to a copy of the records if the record of id has
// revision ifRevision, writes them and installs them.
func (s *Store) changeRecord(id string, ifRevision uint64, fn func(m map[string]admission.EventRecord)) error {
	if err := s.enter(id); err != nil {
		return err
	}
	defer s.life.RUnlock()
	r := &s.records
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := s.loadRecords(); err != nil {
		return err
	}
	if r.byID[id].Revision != ifRevision {
		return admission.ErrRecordConflict
	}
	next := make(map[string]admission.EventRecord, len(r.byID)+1)
	for k, v := range r.byID {
		next[k] = v
	}
	fn(next)
	list := make([]fileRecord, 0, len(next))
	for _, v := range next {
		list = append(list, fileRecord{ID: v.ID, Revision: v.Revision, Body: v.Body})
	}
	slices.SortFunc(list, func(a, b fileRecord) int { return strings.Compare(a.ID, b.ID) })
	err := fsutil.WriteFile(s.opts.Dir, recordsFile, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(list)
	})
	if err != nil {
		return fmt.Errorf("memstore: %w: %v", admission.ErrStoreDown, err)
	}
	r.byID = next
	return nil
}

// PutEventRecord implements admission.Store.
func (s *Store) PutEventRecord(_ context.Context, id string, body []byte, ifRevision uint64) (uint64, error) {
	if len(body) > admission.MaxEventRecord {
		return 0, admission.ErrRecordTooLarge
	}
	rev := ifRevision + 1
	err := s.changeRecord(id, ifRevision, func(m map[string]admission.EventRecord) {
		m[id] = admission.EventRecord{ID: id, Revision: rev, Body: slices.Clone(body)}
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

// DeleteEventRecord implements admission.Store.
func (s *Store) DeleteEventRecord(_ context.Context, id string, ifRevision uint64) error {
	return s.changeRecord(id, ifRevision, func(m map[string]admission.EventRecord) { delete(m, id) })
}

// EventRecords implements admission.Store.
func (s *Store) EventRecords(context.Context) ([]admission.EventRecord, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	r := &s.records
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := s.loadRecords(); err != nil {
		return nil, err
	}
	out := make([]admission.EventRecord, 0, len(r.byID))
	for _, v := range r.byID {
		v.Body = slices.Clone(v.Body)
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b admission.EventRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
