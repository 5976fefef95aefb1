package netlimit

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// pair returns an accepted (wrapped) connection and its client end.
func pair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	l := Wrap(listen(t), "test", Limits{}, nil, nil)
	conns := acceptAll(l)
	client = dial(t, l)
	server = <-conns
	t.Cleanup(func() { server.Close() })
	return server, client
}

func isDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// A read deadline moved later is the one that counts: the earlier one,
// still armed underneath, passes without failing the read.
func TestDeadlineMovedLater(t *testing.T) {
	srv, cli := pair(t)
	start := time.Now()
	if err := srv.SetReadDeadline(start.Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	later := start.Add(10 * time.Second)
	if err := srv.SetReadDeadline(later); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond) // well past the first deadline
		cli.Write([]byte("x"))
	}()
	b := make([]byte, 1)
	if n, err := srv.Read(b); n != 1 || err != nil {
		t.Fatalf("read = %d, %v; want the byte sent after the first deadline", n, err)
	}
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("the read returned before the byte was sent")
	}
	// And the later deadline still holds: moved to a short one again, a
	// read without data times out at it, not before.
	short := time.Now().Add(50 * time.Millisecond)
	if err := srv.SetReadDeadline(short); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Read(b); !isDeadline(err) {
		t.Fatalf("read with no data = %v, want a deadline error", err)
	}
	if time.Now().Before(short) {
		t.Fatal("the read timed out before its deadline")
	}
}

// A deadline moved earlier is armed at once.
func TestDeadlineMovedEarlier(t *testing.T) {
	srv, _ := pair(t)
	if err := srv.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(50 * time.Millisecond)
	if err := srv.SetReadDeadline(soon); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := srv.Read(make([]byte, 1)); done <- err }()
	select {
	case err := <-done:
		if !isDeadline(err) {
			t.Fatalf("read = %v, want a deadline error", err)
		}
		if time.Now().Before(soon) {
			t.Fatal("the read timed out before its deadline")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the earlier deadline never fired")
	}
}

// Clearing the deadline (the zero time) leaves a read waiting past the
// deadline that was armed.
func TestDeadlineCleared(t *testing.T) {
	srv, cli := pair(t)
	srv.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	srv.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		cli.Write([]byte("y"))
	}()
	b := make([]byte, 1)
	if n, err := srv.Read(b); n != 1 || err != nil {
		t.Fatalf("read = %d, %v; want the byte, no deadline", n, err)
	}
	// SetDeadline moves both directions.
	srv.SetDeadline(time.Now().Add(30 * time.Millisecond))
	srv.SetDeadline(time.Time{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		cli.Write([]byte("z"))
	}()
	if n, err := srv.Read(b); n != 1 || err != nil {
		t.Fatalf("after SetDeadline: read = %d, %v; want the byte", n, err)
	}
}

// A deadline in the past set from another goroutine interrupts a read
// already waiting (how net/http aborts its background read).
func TestDeadlineAbortsBlockedRead(t *testing.T) {
	srv, _ := pair(t)
	srv.SetReadDeadline(time.Now().Add(time.Hour))
	done := make(chan error, 1)
	go func() { _, err := srv.Read(make([]byte, 1)); done <- err }()
	time.Sleep(50 * time.Millisecond)
	srv.SetReadDeadline(time.Unix(1, 0))
	select {
	case err := <-done:
		if !isDeadline(err) {
			t.Fatalf("read = %v, want a deadline error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the past deadline did not interrupt the read")
	}
	// Cleared again, the connection reads normally.
	srv.SetReadDeadline(time.Time{})
	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := srv.Read(make([]byte, 1)); !isDeadline(err) {
		t.Fatalf("read = %v, want a deadline error", err)
	}
}

// A write deadline moved later lets a write the earlier one would have
// cut short finish, every byte in order; the write deadline in force
// still fails a write the peer never reads.
func TestWriteDeadlineMovedLater(t *testing.T) {
	srv, cli := pair(t)
	srv.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	srv.SetWriteDeadline(time.Now().Add(time.Minute))
	payload := make([]byte, 64<<20) // far beyond the socket buffers
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(200 * time.Millisecond) // the first deadline passes mid-write
		b, _ := io.ReadAll(io.LimitReader(cli, int64(len(payload))))
		got <- b
	}()
	if n, err := srv.Write(payload); n != len(payload) || err != nil {
		t.Fatalf("write = %d, %v; want all %d bytes", n, err, len(payload))
	}
	b := <-got
	if len(b) != len(payload) {
		t.Fatalf("the peer read %d bytes, want %d", len(b), len(payload))
	}
	for i := range b {
		if b[i] != payload[i] {
			t.Fatalf("byte %d differs", i)
		}
	}

	end := time.Now().Add(100 * time.Millisecond)
	srv.SetWriteDeadline(end)
	n, err := srv.Write(payload) // nobody reads now
	if !isDeadline(err) || n == len(payload) {
		t.Fatalf("write to a peer that does not read = %d, %v; want a deadline error", n, err)
	}
	if time.Now().Before(end) {
		t.Fatal("the write timed out before its deadline")
	}
}

// Deadlines may be moved from several goroutines at once (run with
// -race).
func TestDeadlineConcurrent(t *testing.T) {
	srv, cli := pair(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				d := time.Duration(g*200+i) * time.Millisecond
				srv.SetReadDeadline(time.Now().Add(time.Second + d))
				srv.SetWriteDeadline(time.Now().Add(time.Second + d))
			}
		}()
	}
	go func() { cli.Write([]byte("q")) }()
	if n, err := srv.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("read = %d, %v", n, err)
	}
	wg.Wait()
	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := srv.Read(make([]byte, 1)); !isDeadline(err) {
		t.Fatalf("read = %v, want a deadline error", err)
	}
}

// The point of deferring: a keep-alive connection's per-request moves
// (later, and back to a nearer one still later than the armed deadline)
// arm the timer once, not on every move; an earlier one is armed.
func TestDeadlineArmsRarely(t *testing.T) {
	var d deadline
	var armed []time.Time
	apply := func(t time.Time) error { armed = append(armed, t); return nil }
	now := time.Now()
	for i := range 1000 {
		req := now.Add(time.Duration(i) * time.Millisecond)
		d.set(req.Add(75*time.Second), apply) // idle timeout
		d.set(req.Add(10*time.Second), apply) // header timeout
		d.set(req.Add(60*time.Second), apply) // write timeout, say
	}
	// The first request's idle deadline, then its nearer header deadline;
	// every later move is later than that.
	if len(armed) != 2 || !armed[1].Equal(now.Add(10*time.Second)) {
		t.Fatalf("armed %d times (%v), want twice, for the first request", len(armed), armed)
	}
	d.set(now.Add(time.Second), apply)
	if len(armed) != 3 || !armed[2].Equal(now.Add(time.Second)) {
		t.Fatalf("an earlier deadline was not armed: %v", armed)
	}
	d.set(time.Time{}, apply)
	if len(armed) != 3 {
		t.Fatalf("clearing armed the timer: %v", armed)
	}
	// The armed deadline fires: a later one wanted is armed and the
	// operation goes on; with none wanted, the deadline is cleared.
	if !d.expired(os.ErrDeadlineExceeded, apply) || len(armed) != 4 || !armed[3].IsZero() {
		t.Fatalf("expired with no deadline wanted: %v", armed)
	}
	d.set(time.Now().Add(-time.Second), apply)
	if d.expired(os.ErrDeadlineExceeded, apply) {
		t.Fatal("expired went on past the deadline wanted")
	}
	if d.expired(io.EOF, apply) {
		t.Fatal("expired retried an error that is not a deadline")
	}
}
