package netlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// acceptAll accepts into a channel until the listener is closed.
func acceptAll(l net.Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 64)
	go func() {
		defer close(ch)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			ch <- c
		}
	}()
	return ch
}

func dial(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByPeer reports whether the server side closed c (a read returns
// EOF or a reset rather than timing out).
func closedByPeer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestPerClientLimit(t *testing.T) {
	m := NewMetrics()
	l := Wrap(listen(t), "http", Limits{MaxConnsPerClient: 2}, m, nil)
	conns := acceptAll(l)
	a, b := dial(t, l), dial(t, l)
	ca, cb := <-conns, <-conns
	over := dial(t, l)
	if !closedByPeer(over) {
		t.Fatal("the third connection from one address was kept")
	}
	if got := value(m.limited.WithLabelValues("http", limitPerClient)); got != 1 {
		t.Fatalf("per-client limit hits %v, want 1", got)
	}
	// Closing one (twice: idempotent) frees one slot.
	ca.Close()
	ca.Close()
	c := dial(t, l)
	cc := <-conns
	if l.Open() != 2 {
		t.Fatalf("%d open, want 2", l.Open())
	}
	_, _, _ = a, b, c
	cb.Close()
	cc.Close()
	if l.Open() != 0 {
		t.Fatalf("%d open after closing all", l.Open())
	}
}

func TestPerClientExempt(t *testing.T) {
	l := Wrap(listen(t), "http", Limits{MaxConnsPerClient: 1,
		Exempt: func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }}, nil, nil)
	conns := acceptAll(l)
	for range 3 {
		dial(t, l)
		select {
		case c := <-conns:
			defer c.Close()
		case <-time.After(5 * time.Second):
			t.Fatal("an exempt address was limited")
		}
	}
}

func TestTotalLimitWaits(t *testing.T) {
	m := NewMetrics()
	l := Wrap(listen(t), "http", Limits{MaxConns: 2}, m, nil)
	conns := acceptAll(l)
	dial(t, l)
	dial(t, l)
	first := <-conns
	<-conns
	dial(t, l) // waits in the backlog
	// The accept loop is blocked on a slot: closing one lets it through.
	deadline := time.Now().Add(5 * time.Second)
	for value(m.limited.WithLabelValues("http", limitTotal)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the total limit was never hit")
		}
		time.Sleep(time.Millisecond)
	}
	first.Close()
	select {
	case c := <-conns:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("a freed slot was not reused")
	}
	// Close ends an Accept waiting for a slot.
	l.Close()
	select {
	case _, ok := <-conns:
		if ok {
			t.Fatal("accepted after close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
}

// flaky fails Accept with errs first, then accepts from the real
// listener.
type flaky struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (f *flaky) Accept() (net.Conn, error) {
	f.mu.Lock()
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

func TestAcceptBackoff(t *testing.T) {
	errs := []error{
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)},
	}
	m := NewMetrics()
	l := Wrap(&flaky{Listener: listen(t), errs: errs}, "http", Limits{}, m, nil)
	var slept []time.Duration
	l.sleep = func(d time.Duration, _ <-chan struct{}) bool { slept = append(slept, d); return true }
	dial(t, l)
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	if len(slept) != len(want) {
		t.Fatalf("slept %v", slept)
	}
	for i, d := range want {
		if slept[i] != d*time.Millisecond {
			t.Fatalf("backoff %d was %v, want %v (all: %v)", i, slept[i], d*time.Millisecond, slept)
		}
	}
	if got := value(m.acceptErrors.WithLabelValues("http")); got != float64(len(errs)) {
		t.Fatalf("accept errors counted %v, want %d", got, len(errs))
	}
	// The backoff starts over after a success.
	l.Listener.(*flaky).errs = []error{errs[0]}
	slept = nil
	dial(t, l)
	c, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if len(slept) != 1 || slept[0] != MinAcceptBackoff {
		t.Fatalf("after a success slept %v", slept)
	}
}

func TestAcceptPermanentError(t *testing.T) {
	bad := errors.New("not transient")
	l := Wrap(&flaky{Listener: listen(t), errs: []error{bad}}, "http", Limits{MaxConns: 1}, nil, nil)
	if _, err := l.Accept(); !errors.Is(err, bad) {
		t.Fatalf("got %v", err)
	}
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{os.NewSyscallError("accept4", syscall.EMFILE), true},
		{&net.OpError{Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{syscall.ECONNABORTED, true},
		{syscall.ENOBUFS, true},
		{os.ErrDeadlineExceeded, true},
		{net.ErrClosed, false},
		{syscall.EBADF, false},
		{errors.New("other"), false},
		{nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v", tc.err, got)
		}
	}
}

func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7:80", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:80", "2001:db8:1:2::"},
	} {
		ta, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientKey(ta); got.String() != tc.want {
			t.Errorf("clientKey(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

const childEnv = "WAITROOM_NETLIMIT_EMFILE_CHILD"

// TestEMFILERecovery runs a fasthttp server behind Wrap in a child
// process (this test binary again) whose RLIMIT_NOFILE is 64, opens more
// connections than it has descriptors for, releases them, and expects an
// answer again within a second of the backoff's cap; the child never
// exited in between.
func TestEMFILERecovery(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		emfileChild()
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEMFILERecovery$", "-test.v=false")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the child printed no address")
	}
	addr := strings.TrimPrefix(lines.Text(), "addr ")
	go func() { io.Copy(io.Discard, out); exited <- cmd.Wait() }()

	get := func(path string, timeout time.Duration) (string, error) {
		c := &fasthttp.Client{ReadTimeout: timeout, WriteTimeout: timeout}
		status, body, err := c.GetTimeout(nil, "http://"+addr+path, timeout)
		if err != nil {
			return "", err
		}
		if status != 200 {
			return "", fmt.Errorf("status %d", status)
		}
		return string(body), nil
	}
	if _, err := get("/", 5*time.Second); err != nil {
		t.Fatalf("before: %v", err)
	}
	// More connections than the child has descriptors: the rest wait in
	// its backlog while its accept fails with EMFILE.
	var hold []net.Conn
	for range 150 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		hold = append(hold, c)
	}
	// Give the child time to accept what it can and fail on the rest
	// (the error counter, read below, proves it did).
	time.Sleep(500 * time.Millisecond)
	for _, c := range hold {
		c.Close()
	}
	released := time.Now()
	var body string
	for {
		body, err = get("/errors", time.Second)
		if err == nil {
			break
		}
		if time.Since(released) > 10*time.Second {
			t.Fatalf("no answer 10 s after the release: %v", err)
		}
	}
	took := time.Since(released)
	select {
	case err := <-exited:
		t.Fatalf("the child exited: %v", err)
	default:
	}
	n, _ := strconv.Atoi(body)
	if n == 0 {
		t.Fatal("the child never hit an accept error: the descriptors were not exhausted")
	}
	// The backoff is capped at 1 s; the margin is for a loaded machine.
	if took > 2*time.Second {
		t.Fatalf("answered %v after the release, want about a second", took)
	}
	t.Logf("%d accept errors; answered %v after the descriptors were released", n, took)
}

// emfileChild is the child of TestEMFILERecovery.
func emfileChild() {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		fmt.Fprintln(os.Stderr, "getrlimit:", err)
		os.Exit(2)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: cur.Max}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	m := NewMetrics()
	ln := Wrap(raw, "http", Limits{}, m, nil)
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/errors" {
				fmt.Fprint(ctx, value(m.acceptErrors.WithLabelValues("http")))
				return
			}
			ctx.WriteString("ok")
		},
		ReadTimeout: time.Minute,
		Logger:      quiet{},
	}
	fmt.Printf("addr %s\n", raw.Addr())
	err = srv.Serve(ln)
	fmt.Fprintln(os.Stderr, "Serve returned:", err)
	os.Exit(3)
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// value reads a counter or gauge.
func value(c prometheus.Collector) float64 {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil || len(fams) != 1 || len(fams[0].GetMetric()) != 1 {
		panic(fmt.Sprintf("gather: %v %v", fams, err))
	}
	m := fams[0].GetMetric()[0]
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
