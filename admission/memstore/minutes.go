// The leader's minute records: kept in memory and appended to the
// event's minutes.log, one JSON line per write, fsynced before
// RecordMinute returns. The file is read at the event's first use of
// them, the last line of a minute winning, and written afresh without
// what ran out once most of its lines are dead.

package memstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// minutesFile is the name of an event's minute log.
const minutesFile = "minutes.log"

// minuteBook is an event's minute records, under its own lock (a write
// waits for an fsync, which must not hold up the queue's state).
type minuteBook struct {
	mu     sync.Mutex
	loaded bool
	recs   map[int64]minuteLine // by minute (Unix seconds)
	lines  int                  // lines in the file
	f      *os.File
}

// minuteLine is one line of the log: the minute (Unix seconds), when the
// record runs out (Unix ms) and the record.
type minuteLine struct {
	M int64  `json:"m"`
	U int64  `json:"u"`
	R []byte `json:"r"`
}

// RecordMinute implements admission.Store.
func (s *Store) RecordMinute(ctx context.Context, event string, minute time.Time, record []byte, keep time.Duration) error {
	if err := s.enter(event); err != nil {
		return err
	}
	defer s.life.RUnlock()
	if keep < time.Millisecond {
		return fmt.Errorf("memstore: a minute record needs a retention of at least 1ms (got %v)", keep)
	}
	e := s.event(event, true)
	b := &e.minutes
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := e.loadMinutes(); err != nil {
		return err
	}
	now := s.now()
	line := minuteLine{M: minute.Truncate(time.Minute).Unix(), U: now + keep.Milliseconds(), R: slices.Clone(record)}
	for m, r := range b.recs {
		if r.U <= now {
			delete(b.recs, m)
		}
	}
	b.recs[line.M] = line
	if b.lines >= 64 && b.lines > 2*len(b.recs) {
		return e.rewriteMinutes()
	}
	if err := e.ensureDir(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if b.f == nil {
		f, err := os.OpenFile(filepath.Join(e.dir, minutesFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("memstore: %w", err)
		}
		// The file may be new: its entry in the directory must be
		// durable before a record in it is acknowledged.
		if err := fsutil.SyncDir(e.dir); err != nil {
			f.Close()
			return fmt.Errorf("memstore: %w", err)
		}
		b.f = f
	}
	js, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if _, err := b.f.Write(append(js, '\n')); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	b.lines++
	if err := fsutil.Datasync(b.f); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return nil
}

// Minutes implements admission.Store.
func (s *Store) Minutes(ctx context.Context, event string, from, to time.Time) ([]admission.MinuteRecord, error) {
	if err := s.enter(event); err != nil {
		return nil, err
	}
	defer s.life.RUnlock()
	e := s.event(event, false)
	if e == nil {
		return nil, nil
	}
	b := &e.minutes
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := e.loadMinutes(); err != nil {
		return nil, err
	}
	now := s.now()
	var out []admission.MinuteRecord
	for _, m := range slices.Sorted(maps.Keys(b.recs)) {
		r := b.recs[m]
		at := time.Unix(m, 0).UTC()
		if r.U <= now || at.Before(from) || !at.Before(to) {
			continue
		}
		out = append(out, admission.MinuteRecord{Minute: at, Record: slices.Clone(r.R)})
	}
	return out, nil
}

// loadMinutes reads the event's minute log the first time (under
// e.minutes.mu). A torn last line (a crash in a write that never
// returned, so never acknowledged) is cut off the file, so that the next
// record appended starts a line of its own.
func (e *event) loadMinutes() error {
	b := &e.minutes
	if b.loaded {
		return nil
	}
	b.recs = map[int64]minuteLine{}
	path := filepath.Join(e.dir, minutesFile)
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("memstore: %w", err)
	}
	if whole := bytes.LastIndexByte(raw, '\n') + 1; whole < len(raw) {
		if err := os.Truncate(path, int64(whole)); err != nil {
			return fmt.Errorf("memstore: cutting the torn tail of %s: %w", path, err)
		}
		raw = raw[:whole]
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l minuteLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		b.recs[l.M] = l
		b.lines++
	}
	b.loaded = true
	return nil
}

// rewriteMinutes writes the log afresh with the records in force (under
// e.minutes.mu).
func (e *event) rewriteMinutes() error {
	b := &e.minutes
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	if err := e.ensureDir(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	err := fsutil.WriteFile(e.dir, minutesFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, m := range slices.Sorted(maps.Keys(b.recs)) {
			if err := enc.Encode(b.recs[m]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	b.lines = len(b.recs)
	return nil
}

// closeMinutes closes the event's minute log (by Close).
func (e *event) closeMinutes() {
	b := &e.minutes
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
}
