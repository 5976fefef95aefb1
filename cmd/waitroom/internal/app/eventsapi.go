// The operator API's event lifecycle (POST /admin/v1/events, PATCH and
// DELETE /admin/v1/events/{id}): each change is an event record written
// to the admission store (compare-and-set on its revision) and applied
// through the reload path; every replica reads the records every
// second and applies them when they changed, and at the start.

package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/proxy"
)

// recordsEvery is how often a replica reads the event records for the
// changes another replica made.
const recordsEvery = time.Second

// eventsAPI is proxy.EventsAdmin over the Waitroom.
type eventsAPI struct{ w *Waitroom }

var _ proxy.EventsAdmin = eventsAPI{}

// eventOrigin is where event id's configuration comes from: file or api.
func (w *Waitroom) eventOrigin(id string) string {
	if m := w.reload.origin.Load(); m != nil && (*m)[id] != "" {
		return (*m)[id]
	}
	return originFile
}

// Create makes the event body describes.
func (a eventsAPI) Create(ctx context.Context, body []byte) (string, error) {
	w, r := a.w, &a.w.reload
	ae, err := config.ParseAPIEvent(body)
	if err != nil {
		return "", problemsOf(err)
	}
	id := ae.Event.ID
	if id == "" {
		return "", &proxy.EventProblems{Problems: []string{"event.id: is required"}}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		return id, err
	}
	if fileEvent(r.file, id) != nil || slices.ContainsFunc(recs, func(x admission.EventRecord) bool { return x.ID == id }) {
		return id, proxy.ErrEventExists
	}
	next := withRecord(recs, admission.EventRecord{ID: id, Revision: 1, Body: body})
	if _, _, err := validate(r.file, next, id); err != nil {
		return id, apiError(err)
	}
	rev, err := w.store.PutEventRecord(ctx, id, body, 0)
	if err != nil {
		return id, storeError(err, proxy.ErrEventExists)
	}
	next = withRecord(recs, admission.EventRecord{ID: id, Revision: rev, Body: body})
	if _, err := w.applyLocked(ctx, r.file, next, id); err != nil {
		w.rollback(id, func(ctx context.Context) error { return w.store.DeleteEventRecord(ctx, id, rev) })
		return id, apiError(err)
	}
	return id, nil
}

// Patch applies a JSON merge patch to event id's record; an event of the
// file gets a record that starts from the file's event.
func (a eventsAPI) Patch(ctx context.Context, id string, patch []byte) error {
	w, r := a.w, &a.w.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		return err
	}
	var base []byte
	var rev uint64
	if i := slices.IndexFunc(recs, func(x admission.EventRecord) bool { return x.ID == id }); i >= 0 {
		base, rev = recs[i].Body, recs[i].Revision
	} else if e := fileEvent(r.file, id); e != nil {
		if base, err = config.APIEventJSON(*e); err != nil {
			return err
		}
	} else {
		return admission.ErrUnknownEvent
	}
	doc, err := mergePatch(base, patch)
	if err != nil {
		return &proxy.EventProblems{Problems: []string{"the patch must be one JSON object"}}
	}
	ae, err := config.ParseAPIEvent(doc)
	if err != nil {
		return problemsOf(err)
	}
	if ae.Event.ID != id {
		return &proxy.EventProblems{Problems: []string{fmt.Sprintf("event.id: cannot change (it is %q)", id)}}
	}
	if _, _, err := validate(r.file, withRecord(recs, admission.EventRecord{ID: id, Revision: rev + 1, Body: doc}), id); err != nil {
		return apiError(err)
	}
	nrev, err := w.store.PutEventRecord(ctx, id, doc, rev)
	if err != nil {
		return storeError(err, proxy.ErrEventChanged)
	}
	if _, err := w.applyLocked(ctx, r.file, withRecord(recs, admission.EventRecord{ID: id, Revision: nrev, Body: doc}), id); err != nil {
		w.rollback(id, func(ctx context.Context) error {
			if rev == 0 {
				return w.store.DeleteEventRecord(ctx, id, nrev)
			}
			_, err := w.store.PutEventRecord(ctx, id, base, nrev)
			return err
		})
		return apiError(err)
	}
	return nil
}

// Delete removes an event made through the API.
func (a eventsAPI) Delete(ctx context.Context, id string) error {
	w, r := a.w, &a.w.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	if fileEvent(r.file, id) != nil {
		return proxy.ErrFileEvent
	}
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(recs, func(x admission.EventRecord) bool { return x.ID == id })
	if i < 0 {
		return admission.ErrUnknownEvent
	}
	rec := recs[i]
	next := slices.Delete(slices.Clone(recs), i, i+1)
	if _, _, err := validate(r.file, next, ""); err != nil {
		return apiError(err)
	}
	if err := w.store.DeleteEventRecord(ctx, id, rec.Revision); err != nil {
		return storeError(err, proxy.ErrEventChanged)
	}
	if _, err := w.applyLocked(ctx, r.file, next, ""); err != nil {
		w.rollback(id, func(ctx context.Context) error {
			_, err := w.store.PutEventRecord(ctx, id, rec.Body, 0)
			return err
		})
		return apiError(err)
	}
	return nil
}

// rollback undoes a record written for a change that could not be
// applied (with a context of its own: the request's may be done).
func (w *Waitroom) rollback(id string, undo func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := undo(ctx); err != nil {
		w.log.Error("app: undoing an event record that could not be applied failed; other replicas refuse it too",
			"event", id, "err", err)
	}
}

// syncRecords reads the event records and, when they differ from those
// in force, applies them over the file's configuration.
func (w *Waitroom) syncRecords(ctx context.Context) {
	r := &w.reload
	// Read under mu: records read before a change made here and applied
	// after it would undo it until the next read.
	r.mu.Lock()
	defer r.mu.Unlock()
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		w.log.Warn("app: reading the event records failed; will retry", "err", err)
		return
	}
	if sameRecords(recs, r.recs) || r.refused != nil && sameRecords(recs, r.refused) {
		return
	}
	res, err := w.applyLocked(ctx, r.file, recs, "")
	if err != nil {
		// Not again until the records change.
		r.refused = recs
		w.log.Error("app: the event records could not be applied; the events in force stay", "err", OneLine(err))
		return
	}
	r.refused = nil
	w.log.Info("app: event records applied", "events_added", res.Events.Added, "events_changed", res.Events.Changed,
		"events_removed", res.Events.Removed)
}

// startRecords returns what a replica starts from: file overlaid with
// the event records, the records, and where each event came from. When
// the records cannot be read it starts from the file and the watcher
// reads them again; when they cannot be applied, from the file too, and
// the watcher tries them again once they change.
func (w *Waitroom) startRecords(ctx context.Context, file *config.Config) (*config.Config, []admission.EventRecord, map[string]string) {
	_, fileOrigin, _ := overlay(file, nil)
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		w.log.Warn("app: reading the event records failed; starting from the file, will retry", "err", err)
		return file, nil, fileOrigin
	}
	cfg, origin, err := validate(file, recs, "")
	if err != nil {
		w.reload.refused = recs
		w.log.Error("app: the event records could not be applied; starting from the file", "err", OneLine(err))
		return file, nil, fileOrigin
	}
	return cfg, recs, origin
}

// watchRecords runs syncRecords every recordsEvery until ctx ends.
func (w *Waitroom) watchRecords(ctx context.Context) {
	t := time.NewTicker(recordsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.syncRecords(ctx)
		}
	}
}

func sameRecords(a, b []admission.EventRecord) bool {
	return slices.EqualFunc(a, b, func(x, y admission.EventRecord) bool {
		return x.ID == y.ID && x.Revision == y.Revision && bytes.Equal(x.Body, y.Body)
	})
}

// withRecord is recs with rec in place of the record of its id, or added
// in id order (the store's order, so every replica routes alike).
func withRecord(recs []admission.EventRecord, rec admission.EventRecord) []admission.EventRecord {
	out := slices.Clone(recs)
	i, found := slices.BinarySearchFunc(out, rec.ID, func(x admission.EventRecord, id string) int { return strings.Compare(x.ID, id) })
	if found {
		out[i] = rec
		return out
	}
	return slices.Insert(out, i, rec)
}

func fileEvent(file *config.Config, id string) *config.Event {
	for i := range file.Events {
		if file.Events[i].ID == id {
			return &file.Events[i]
		}
	}
	return nil
}

// problemsOf is a parse error as the API's problem list.
func problemsOf(err error) error {
	var out []string
	for _, p := range config.Problems(err) {
		out = append(out, p.Error())
	}
	if len(out) == 0 {
		out = []string{OneLine(err)}
	}
	return &proxy.EventProblems{Problems: out}
}

// apiError is a refused apply as the API's error.
func apiError(err error) error {
	if errors.Is(err, admission.ErrLiveChange) {
		return proxy.ErrEventTimesPassed
	}
	var re *ReloadError
	if errors.As(err, &re) {
		return &proxy.EventProblems{Problems: re.Problems}
	}
	return err
}

// storeError is a failed record write: conflict (the record is not what
// was read) or another failure.
func storeError(err, conflict error) error {
	switch {
	case errors.Is(err, admission.ErrRecordConflict):
		return conflict
	case errors.Is(err, admission.ErrRecordTooLarge):
		return &proxy.EventProblems{Problems: []string{fmt.Sprintf("the event's record exceeds %d bytes", admission.MaxEventRecord)}}
	}
	return err
}
