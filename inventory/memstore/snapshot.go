package memstore

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/inventory"
)

// A snapshot is an event's whole state as of a journal offset. Recovery
// loads it and replays the journal from that offset, so snapshots only
// shorten start-up; the journal alone is enough to rebuild any event.
const snapshotFormat = 1

type snapshotFile struct {
	Format int                `json:"format"`
	Event  string             `json:"event"`
	Offset int64              `json:"offset"`
	Def    inventory.EventDef `json:"def"`
	Rows   [][]string         `json:"rows"`  // per section, per row: status bytes
	Pools  [][2]int           `json:"pools"` // per pool: held, sold
	Holds  []*hold            `json:"holds"`
	Orders []*order           `json:"orders"`
	Idem   []*idemRec         `json:"idem"`

	size int64 // bytes written, once written
}

// maybeSnapshot starts writing a snapshot once enough records have piled
// up and the journal has grown by about the last snapshot's size since
// it, so that a snapshot costs no more than the replay it saves. Called
// with sl.mu held: it only copies the state; encoding and writing happen
// in the background.
func (sl *slot) maybeSnapshot(s *Store) {
	if sl.records < s.opts.SnapshotEvery || sl.j.End()-sl.snapOffset < sl.snapSize.Load() ||
		!sl.snap.CompareAndSwap(false, true) {
		return
	}
	f := sl.capture()
	b := sl.j.Barrier()
	sl.records = 0
	sl.snapOffset = f.Offset
	sl.snapWG.Add(1)
	go func() {
		defer sl.snapWG.Done()
		defer sl.snap.Store(false)
		if b.Wait(context.Background()) != nil {
			return // the journal failed; the store is unusable anyway
		}
		if err := writeSnapshot(sl.dir, f); err != nil {
			s.opts.Logger.Warn("memstore: writing snapshot failed; the journal still has everything", "event", sl.ev.id, "err", err)
		}
		sl.snapSize.Store(f.size)
	}()
}

// capture copies the event's state as of the journal's current end. Holds,
// orders, idempotency records and the definition are never changed once
// made (see hold.changed), so their pointers are enough; the rows are
// copied.
func (sl *slot) capture() *snapshotFile {
	e := sl.ev
	f := &snapshotFile{Format: snapshotFormat, Event: e.id, Offset: sl.j.End(), Def: e.def,
		Rows: make([][]string, len(e.sections)), Pools: make([][2]int, len(e.pools)),
		Holds: make([]*hold, 0, len(e.holds)), Orders: make([]*order, 0, len(e.orders)),
		Idem: make([]*idemRec, 0, len(e.idem))}
	for i, s := range e.sections {
		f.Rows[i] = make([]string, len(s.rows))
		for j, r := range s.rows {
			f.Rows[i][j] = string(r.st)
		}
	}
	for i, p := range e.pools {
		f.Pools[i] = [2]int{p.held, p.sold}
	}
	for _, h := range e.holds {
		f.Holds = append(f.Holds, h)
	}
	for _, o := range e.orders {
		f.Orders = append(f.Orders, o)
	}
	for _, r := range e.idem {
		f.Idem = append(f.Idem, r)
	}
	return f
}

// encode writes the snapshot as JSON, the form readSnapshot reads with
// encoding/json. Holds and orders, nearly all of it, are appended by hand
// in one buffer that is flushed as it fills: reflection over hundreds of
// thousands of them took a core for most of a second.
func (f *snapshotFile) encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	b := make([]byte, 0, 64<<10)
	flush := func(b []byte) ([]byte, error) {
		_, err := bw.Write(b)
		return b[:0], err
	}
	raw := func(name string, v any) error {
		data, err := json.Marshal(v)
		b = append(jsonenc.Key(b, name), data...)
		return err
	}
	b = append(b, '{')
	b = jsonenc.Int(jsonenc.Key(b, "format"), int64(f.Format))
	b = jsonenc.String(jsonenc.Key(b, "event"), f.Event)
	b = jsonenc.Int(jsonenc.Key(b, "offset"), f.Offset)
	if err := errors.Join(raw("def", f.Def), raw("rows", f.Rows), raw("pools", f.Pools)); err != nil {
		return err
	}
	var err error
	if b, err = appendArray(b, "holds", f.Holds, appendHold, flush); err != nil {
		return err
	}
	if b, err = appendArray(b, "orders", f.Orders, appendOrder, flush); err != nil {
		return err
	}
	if err := raw("idem", f.Idem); err != nil {
		return err
	}
	b = append(b, '}')
	if _, err := flush(b); err != nil {
		return err
	}
	return bw.Flush()
}

// appendArray appends key and items as a JSON array (null for nil), each
// item by one, handing the buffer to flush whenever it passes 60 KiB.
func appendArray[T any](b []byte, key string, items []T, one func([]byte, T) []byte, flush func([]byte) ([]byte, error)) ([]byte, error) {
	b = jsonenc.Key(b, key)
	if items == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = one(b, it)
		if len(b) > 60<<10 {
			var err error
			if b, err = flush(b); err != nil {
				return b, err
			}
		}
	}
	return append(b, ']'), nil
}

// appendHold and appendOrder write what encoding/json would for *hold and
// *order (TestSnapshotEncoding).
func appendHold(b []byte, h *hold) []byte {
	b = append(b, '{')
	b = jsonenc.String(jsonenc.Key(b, "id"), h.ID)
	b = jsonenc.String(jsonenc.Key(b, "user"), h.User)
	if len(h.Seats) > 0 {
		b = jsonenc.Strings(jsonenc.Key(b, "seats"), h.Seats)
	}
	if h.Pool != "" {
		b = jsonenc.String(jsonenc.Key(b, "pool"), h.Pool)
	}
	b = jsonenc.Int(jsonenc.Key(b, "qty"), int64(h.Qty))
	b = jsonenc.Int(jsonenc.Key(b, "price"), h.Price)
	b = jsonenc.Int(jsonenc.Key(b, "created"), h.Created)
	b = jsonenc.Int(jsonenc.Key(b, "exp"), h.Expires)
	b = jsonenc.String(jsonenc.Key(b, "status"), string(h.Status))
	if h.Order != "" {
		b = jsonenc.String(jsonenc.Key(b, "order"), h.Order)
	}
	if h.Ended != 0 {
		b = jsonenc.Int(jsonenc.Key(b, "ended"), h.Ended)
	}
	return append(b, '}')
}

func appendOrder(b []byte, o *order) []byte {
	b = append(b, '{')
	b = jsonenc.String(jsonenc.Key(b, "id"), o.ID)
	b = jsonenc.String(jsonenc.Key(b, "hold"), o.Hold)
	b = jsonenc.String(jsonenc.Key(b, "user"), o.User)
	if len(o.Seats) > 0 {
		b = jsonenc.Strings(jsonenc.Key(b, "seats"), o.Seats)
	}
	if o.Pool != "" {
		b = jsonenc.String(jsonenc.Key(b, "pool"), o.Pool)
	}
	b = jsonenc.Int(jsonenc.Key(b, "qty"), int64(o.Qty))
	b = jsonenc.Int(jsonenc.Key(b, "price"), o.Price)
	if o.PayRef != "" {
		b = jsonenc.String(jsonenc.Key(b, "pay"), o.PayRef)
	}
	b = jsonenc.String(jsonenc.Key(b, "status"), string(o.Status))
	b = jsonenc.Int(jsonenc.Key(b, "confirmed"), o.Confirmed)
	if o.Cancelled != 0 {
		b = jsonenc.Int(jsonenc.Key(b, "cancelled"), o.Cancelled)
	}
	return append(b, '}')
}

// writeSnapshot replaces the snapshot atomically (fsutil.WriteFile) and
// records its size in f.
func writeSnapshot(dir string, f *snapshotFile) error {
	return fsutil.WriteFile(dir, "snapshot", func(w io.Writer) error {
		cw := &countingWriter{w: w}
		err := f.encode(cw)
		f.size = cw.n
		return err
	})
}

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readSnapshot loads an event's snapshot; a missing one yields nil and 0.
func readSnapshot(dir, id string) (*event, int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, "snapshot"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("memstore: %w", err)
	}
	var f snapshotFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, 0, fmt.Errorf("memstore: event %s: bad snapshot: %w", id, err)
	}
	if f.Format != snapshotFormat || f.Event != id || len(f.Rows) != len(f.Def.Sections) || len(f.Pools) != len(f.Def.GA) {
		return nil, 0, fmt.Errorf("memstore: event %s: snapshot does not match its definition", id)
	}
	e := newEvent(id)
	e.define(f.Def)
	for i, s := range e.sections {
		if len(f.Rows[i]) != len(s.rows) {
			return nil, 0, fmt.Errorf("memstore: event %s: snapshot rows do not match the definition", id)
		}
		for j, r := range s.rows {
			if len(f.Rows[i][j]) != len(r.st) {
				return nil, 0, fmt.Errorf("memstore: event %s: snapshot row size does not match the definition", id)
			}
			copy(r.st, f.Rows[i][j])
		}
		s.recount()
	}
	for i, p := range e.pools {
		p.held, p.sold = f.Pools[i][0], f.Pools[i][1]
	}
	for _, h := range f.Holds {
		e.holds[h.ID] = h
		switch h.Status {
		case inventory.HoldHeld:
			e.addUser(h.User, h.Qty)
			heap.Push(&e.expiries, expiry{at: h.Expires, hold: h})
		}
	}
	for _, o := range f.Orders {
		e.orders[o.ID] = o
		if h := e.holds[o.Hold]; h != nil {
			o.Seats = h.Seats // share, as live operation does
		}
		if o.Status == inventory.OrderConfirmed {
			e.addUser(o.User, o.Qty)
		}
	}
	var finished []*hold
	for _, h := range f.Holds {
		if h.Status == inventory.HoldReleased || h.Status == inventory.HoldExpired {
			finished = append(finished, h)
		}
	}
	slices.SortStableFunc(finished, func(a, b *hold) int { return cmp.Compare(a.Ended, b.Ended) })
	for _, h := range finished {
		e.finished.push(h)
	}
	slices.SortStableFunc(f.Idem, func(a, b *idemRec) int { return cmp.Compare(a.At, b.At) })
	for _, r := range f.Idem {
		e.idem[r.Key] = r
		e.idemFIFO.push(r)
	}
	return e, f.Offset, nil
}
