package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/waitroom/waitroom/bench/internal/stats"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/memstore"
)

var (
	rounds   = flag.Int("rounds", 5, "rounds per contender (medians are reported)")
	duration = flag.Duration("duration", 2*time.Second, "length of each contender's run in a round")
	outDir   = flag.String("out", "", "directory to write the report to as well (none when empty)")
)

// target is the verification rate one core must reach with K=16.
const target = 200_000

const (
	event   = "bench-event"
	ttl     = 5 * time.Minute
	ntokens = 1024
)

var (
	key     = bytes.Repeat([]byte{0x5a}, 32)
	binding = [16]byte{0xb1, 0x4d}
)

// contender is one measured loop: run does n operations.
type contender struct {
	name   string
	k      int
	verify bool // held to the target
	run    func(n int)
	// setup runs before each round's measurement (not timed).
	setup func()
	// note is printed after the round's rate (refusals).
	note func() string
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()

	var report strings.Builder
	out := io.MultiWriter(os.Stdout, &report)
	fmt.Fprintf(out, "waitroom proof-of-work verification benchmark, %s, %s, cpu: %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.Version(), cpuModel())
	fmt.Fprintf(out, "one core: GOMAXPROCS=1, main goroutine locked to its thread; %d rounds of %s per contender, order rotated, medians.\n",
		*rounds, *duration)
	fmt.Fprintln(out, "verify: PoW.Verify of a good solution (base64url decode, one HMAC-SHA256, K SHA-256 of 28 bytes, checks), 1,024 tokens in turn.")
	fmt.Fprintln(out, "verify+redeem: Verify then Redeem in a memstore guard (defaults, window 5m, exact set pre-filled), a fresh id each time.")
	fmt.Fprintln(out, "floor: a bare loop of K sha256.Sum256 of 28 bytes plus one HMAC-SHA256 of a token's length: the hashing alone.")

	var cs []*contender
	for _, k := range []int{8, 16, 32} {
		cs = append(cs, verifier(k), floor(k))
	}
	cs = append(cs, verifyRedeem(16))

	rates := map[*contender][]float64{}
	fmt.Fprintln(out)
	for round := range *rounds {
		order := slices.Clone(cs)
		for range round % len(order) { // rotate, so no contender always runs first
			order = append(order[1:], order[0])
		}
		for _, c := range order {
			if c.setup != nil {
				c.setup()
			}
			r := measure(c.run, *duration)
			rates[c] = append(rates[c], r)
			note := ""
			if c.note != nil {
				note = "  " + c.note()
			}
			fmt.Fprintf(out, "  round %d  %-20s %10.0f /s  %7.0f ns/op%s\n", round+1, c.name, r, 1e9/r, note)
		}
	}

	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "contender\tmedian /s\tns/op\tratio to floor\tratio to target\ttarget ≥ 200000/s")
	floors := map[int]float64{}
	for _, c := range cs {
		if strings.Contains(c.name, "floor") {
			floors[c.k] = stats.Median(rates[c])
		}
	}
	for _, c := range cs {
		m := stats.Median(rates[c])
		verdict := "-"
		if c.verify {
			verdict = pass(m >= target)
			if c.k != 16 {
				verdict += " (target stated for K=16)"
			}
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f×\t%.2f×\t%s\n", c.name, m, 1e9/m, m/floors[c.k], m/target, verdict)
	}
	tw.Flush()
	for _, k := range []int{8, 16, 32} {
		v, f := medianOf(cs, fmt.Sprintf("K=%d verify", k), rates), floors[k]
		fmt.Fprintf(out, "K=%d: verify %.0f/s = %.2f× the target (%s), %.2f× the floor of %.0f/s\n", k, v, v/target, pass(v >= target), v/f, f)
	}

	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			log.Fatal(err)
		}
		path := filepath.Join(*outDir, "challenge-"+time.Now().UTC().Format("20060102T150405Z")+".txt")
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nreport written to %s\n", path)
	}
}

// solved is a token with its solution.
type solved struct {
	token  string
	nonces []uint64
}

// tokens issues and solves n challenges of K sub-puzzles at bits 1.
func tokens(pow *challenge.PoW, k, n int) []solved {
	out := make([]solved, n)
	for i := range out {
		token, c, err := pow.Issue(challenge.IssueParams{Event: event, Binding: binding, Bits: 1, Puzzles: uint8(k),
			Score: 10, TTL: ttl})
		if err != nil {
			log.Fatal(err)
		}
		out[i] = solved{token, challenge.Solve(c.Seed, c.Bits, c.Puzzles)}
	}
	return out
}

func newPoW(g challenge.ReplayGuard) *challenge.PoW {
	pow, err := challenge.NewPoW(key, g)
	if err != nil {
		log.Fatal(err)
	}
	return pow
}

func verifier(k int) *contender {
	pow := newPoW(memstore.New(memstore.Options{Window: ttl}))
	ts := tokens(pow, k, ntokens)
	i := 0
	return &contender{name: fmt.Sprintf("K=%d verify", k), k: k, verify: true, run: func(n int) {
		now := time.Now()
		for range n {
			t := &ts[i%ntokens]
			i++
			if _, err := pow.Verify(t.token, t.nonces, event, binding, now); err != nil {
				log.Fatalf("verify: %v", err)
			}
		}
	}}
}

func verifyRedeem(k int) *contender {
	var (
		g        *memstore.Guard
		pow      *challenge.PoW
		ts       []solved
		i        int
		id       uint64
		refused  int
		redeemed int
	)
	ctx := context.Background()
	c := &contender{name: fmt.Sprintf("K=%d verify+redeem", k), k: k, verify: true}
	c.setup = func() {
		if g != nil {
			g.Close()
		}
		g = memstore.New(memstore.Options{Window: ttl})
		pow = newPoW(g)
		ts = tokens(pow, k, ntokens)
		refused, redeemed = 0, 0
		// Fill the exact set, so each redeem also drops an id, as in a
		// guard that has been busy for a while.
		exp := time.Now().Add(ttl)
		b := make([]byte, 16)
		for range memstore.DefaultMaxExact {
			id++
			binary.BigEndian.PutUint64(b, id)
			g.Redeem(ctx, b, exp)
		}
	}
	c.run = func(n int) {
		now := time.Now()
		for range n {
			t := &ts[i%ntokens]
			i++
			ch, err := pow.Verify(t.token, t.nonces, event, binding, now)
			if err != nil {
				log.Fatalf("verify: %v", err)
			}
			id++
			binary.BigEndian.PutUint64(ch.ID[:8], id)
			switch err := pow.Redeem(ctx, ch); {
			case err == nil:
				redeemed++
			case err == challenge.ErrReplayed:
				refused++ // a bloom false positive: the visitor would re-solve
			default:
				log.Fatalf("redeem: %v", err)
			}
		}
	}
	c.note = func() string {
		return fmt.Sprintf("%d redeemed, %d fresh ids refused (false positives)", redeemed, refused)
	}
	return c
}

// floor is the cryptography alone: K Sum256 of 28 bytes and one
// AES-256-GCM opening of a token's sealed part, as challenge.PoW derives
// its key and lays out the token.
func floor(k int) *contender {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("waitroom/pow/v2 aes-256-gcm"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		log.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		log.Fatal(err)
	}
	pow := newPoW(memstore.New(memstore.Options{Window: ttl}))
	raw, err := base64.RawURLEncoding.DecodeString(tokens(pow, k, 1)[0].token)
	if err != nil {
		log.Fatal(err)
	}
	ad := append([]byte("waitroom/pow/v2\x00"), raw[:17]...)
	plain := make([]byte, 0, len(raw))
	var msg [28]byte
	return &contender{name: fmt.Sprintf("K=%d floor", k), k: k, run: func(n int) {
		// sink keeps the hashes from being optimised away.
		var sink byte
		for j := range n {
			pt, err := gcm.Open(plain[:0], raw[1:13], raw[17:], ad)
			if err != nil {
				log.Fatal(err)
			}
			sink ^= pt[0]
			copy(msg[:16], raw[len(raw)-16:])
			binary.BigEndian.PutUint64(msg[20:], uint64(j))
			for i := range k {
				binary.BigEndian.PutUint32(msg[16:20], uint32(i))
				h := sha256.Sum256(msg[:])
				sink ^= h[0]
			}
		}
		runtime.KeepAlive(sink)
	}}
}

// measure runs f in batches until d has passed and returns operations
// per second.
func measure(f func(n int), d time.Duration) float64 {
	f(64) // warm up
	const batch = 256
	n := 0
	start := time.Now()
	for {
		f(batch)
		n += batch
		if el := time.Since(start); el >= d {
			return float64(n) / el.Seconds()
		}
	}
}

func medianOf(cs []*contender, name string, rates map[*contender][]float64) float64 {
	for _, c := range cs {
		if c.name == name {
			return stats.Median(rates[c])
		}
	}
	return math.NaN()
}

func pass(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// cpuModel is the CPU's name from /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}
