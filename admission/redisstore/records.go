// Event records: the events made or changed through the operator API.

package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/admission"
)

// recordsKey is the one hash of every event record (not an event's key:
// the records are read all at once).
func (s *Store) recordsKey() string { return s.prefix + "events" }

// PutEventRecord implements admission.Store: one script compares the
// revision and writes.
func (s *Store) PutEventRecord(ctx context.Context, id string, body []byte, ifRevision uint64) (uint64, error) {
	if err := checkEvent(id); err != nil {
		return 0, err
	}
	if len(body) > admission.MaxEventRecord {
		return 0, admission.ErrRecordTooLarge
	}
	rev, err := s.script(ctx, scriptRecord, []string{s.recordsKey()}, id, ifRevision, body, "put").Int64()
	if err != nil {
		return 0, fail(err)
	}
	if rev < 0 {
		return 0, admission.ErrRecordConflict
	}
	return uint64(rev), nil
}

// DeleteEventRecord implements admission.Store.
func (s *Store) DeleteEventRecord(ctx context.Context, id string, ifRevision uint64) error {
	if err := checkEvent(id); err != nil {
		return err
	}
	rev, err := s.script(ctx, scriptRecord, []string{s.recordsKey()}, id, ifRevision, "", "del").Int64()
	if err != nil {
		return fail(err)
	}
	if rev < 0 {
		return admission.ErrRecordConflict
	}
	return nil
}

// EventRecords implements admission.Store.
func (s *Store) EventRecords(ctx context.Context) ([]admission.EventRecord, error) {
	raw, err := s.c.HGetAll(ctx, s.recordsKey()).Result()
	if err != nil {
		return nil, fail(err)
	}
	out := make([]admission.EventRecord, 0, len(raw))
	for id, v := range raw {
		revText, body, ok := strings.Cut(v, ":")
		rev, err := strconv.ParseUint(revText, 10, 64)
		if !ok || err != nil || rev == 0 {
			return nil, fmt.Errorf("redisstore: bad event record of %q", id)
		}
		out = append(out, admission.EventRecord{ID: id, Revision: rev, Body: []byte(body)})
	}
	slices.SortFunc(out, func(a, b admission.EventRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
