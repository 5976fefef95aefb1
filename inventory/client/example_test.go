package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// sidecar is a real sidecar in this process: a memstore in a directory
// behind an api.Server on a loopback port.
type sidecar struct {
	URL   string
	Token string
	Store *memstore.Store
	stop  func()
}

// startSidecar starts a sidecar over the data directory dir.
func startSidecar(dir string) (*sidecar, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := memstore.Open(memstore.Options{Dir: dir, Logger: quiet})
	if err != nil {
		return nil, err
	}
	const token = "example-token"
	srv, err := api.New(store, api.Options{Token: token, Logger: quiet})
	if err != nil {
		store.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	return &sidecar{URL: "http://" + ln.Addr().String(), Token: token, Store: store, stop: func() {
		once.Do(func() {
			cancel()
			<-done
			store.Close()
		})
	}}, nil
}

// exampleSidecar starts a sidecar over a fresh temporary directory.
func exampleSidecar() (*sidecar, func()) {
	dir, err := os.MkdirTemp("", "waitroom-example-")
	if err != nil {
		panic(err)
	}
	sc, err := startSidecar(dir)
	if err != nil {
		panic(err)
	}
	return sc, func() { sc.stop(); os.RemoveAll(dir) }
}

// A checkout holds the best two seats, then confirms them after payment.
func Example() {
	sc, stop := exampleSidecar()
	defer stop()
	ctx := context.Background()

	c := client.New(sc.URL, sc.Token, client.WithActor("checkout"))
	defer c.Close()

	_, err := c.PutEvent(ctx, "concert", inventory.EventDef{
		Sections: []inventory.Section{{ID: "A", Tier: "gold", PriceCents: 15000,
			Rows: []inventory.Row{{ID: "1", Seats: 10}}}},
		Limits: inventory.Limits{PerUser: 4},
	}, "ops")
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := c.Hold(ctx, "concert", inventory.HoldRequest{
		User:           "alice",
		Best:           &inventory.BestRequest{Section: "A", Quantity: 2},
		IdempotencyKey: "cart-42-hold",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", h.Seats, h.Status, h.PriceCents)

	// A retry with the same key (say, after a timeout) gets the same hold.
	again, _ := c.Hold(ctx, "concert", inventory.HoldRequest{
		User:           "alice",
		Best:           &inventory.BestRequest{Section: "A", Quantity: 2},
		IdempotencyKey: "cart-42-hold",
	})
	fmt.Println("retry replayed:", again.Replayed, again.ID == h.ID)

	o, err := c.Confirm(ctx, "concert", h.ID, inventory.ConfirmRequest{PaymentRef: "pay_123"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("order:", o.Seats, o.Status, o.PaymentRef)

	a, _ := c.Availability(ctx, "concert")
	fmt.Printf("available %d, held %d, sold %d\n", a.Available, a.Held, a.Sold)
	// Output:
	// held: [A-1-5 A-1-6] held 30000
	// retry replayed: true true
	// order: [A-1-5 A-1-6] confirmed pay_123
	// available 8, held 0, sold 2
}

// A conflict names the seats that were taken; errors.Is tells what
// happened.
func Example_conflict() {
	sc, stop := exampleSidecar()
	defer stop()
	ctx := context.Background()
	c := client.New(sc.URL, sc.Token)
	defer c.Close()

	c.PutEvent(ctx, "concert", inventory.EventDef{
		Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 4}}}},
		Limits:   inventory.Limits{PerUser: 3},
	}, "ops")
	c.Hold(ctx, "concert", inventory.HoldRequest{User: "bob", Seats: []string{"A-1-2"}})

	_, err := c.Hold(ctx, "concert", inventory.HoldRequest{User: "alice", Seats: []string{"A-1-1", "A-1-2"}})
	switch {
	case errors.Is(err, inventory.ErrSeatUnavailable):
		fmt.Println("taken:", inventory.Details(err).Seats)
	case err != nil:
		fmt.Println("other error:", err)
	}

	_, err = c.Hold(ctx, "concert", inventory.HoldRequest{User: "alice", Seats: []string{"A-1-1", "A-1-3", "A-1-4", "A-1-9"}})
	if errors.Is(err, inventory.ErrSeatNotFound) {
		fmt.Println("no such seat:", inventory.Details(err).Seats)
	}

	_, err = c.Hold(ctx, "concert", inventory.HoldRequest{User: "alice", Seats: []string{"A-1-1", "A-1-3", "A-1-4", "A-1-3"}})
	fmt.Println("invalid:", errors.Is(err, inventory.ErrInvalid))

	_, err = c.Hold(ctx, "concert", inventory.HoldRequest{User: "bob", Best: &inventory.BestRequest{Section: "A", Quantity: 3}})
	if errors.Is(err, inventory.ErrUserLimit) {
		d := inventory.Details(err)
		fmt.Printf("limit %d, bob has %d\n", d.Limit, d.Current)
	}

	_, err = client.New(sc.URL, "wrong-token").Events(ctx)
	fmt.Println("unauthorized:", errors.Is(err, client.ErrUnauthorized))
	// Output:
	// taken: [A-1-2]
	// no such seat: [A-1-9]
	// invalid: true
	// limit 3, bob has 1
	// unauthorized: true
}

// Release gives seats back; releasing again is harmless.
func ExampleClient_Release() {
	sc, stop := exampleSidecar()
	defer stop()
	ctx := context.Background()
	c := client.New(sc.URL, sc.Token)
	defer c.Close()

	c.PutEvent(ctx, "gig", inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: 100, PriceCents: 4000}}}, "ops")
	h, err := c.Hold(ctx, "gig", inventory.HoldRequest{User: "carol", GA: &inventory.GARequest{Pool: "floor", Quantity: 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		r, err := c.Release(ctx, "gig", h.ID, inventory.ReleaseRequest{})
		fmt.Println(r.Status, r.HoldStatus, err)
	}
	_, err = c.Confirm(ctx, "gig", h.ID, inventory.ConfirmRequest{})
	fmt.Println("confirm after release:", errors.Is(err, inventory.ErrHoldReleased))
	// Output:
	// released released <nil>
	// released released <nil>
	// confirm after release: true
}

// A buyer still paying keeps their seats: the checkout extends the hold on
// each page load, up to the event's maximum hold time; a hold that ran out
// cannot be extended.
func ExampleClient_Extend() {
	sc, stop := exampleSidecar()
	defer stop()
	ctx := context.Background()
	c := client.New(sc.URL, sc.Token)
	defer c.Close()

	c.PutEvent(ctx, "concert", inventory.EventDef{
		GA:             []inventory.Pool{{ID: "floor", Capacity: 100}},
		HoldTTLSeconds: 300, MaxHoldSeconds: 900,
	}, "ops")
	h, err := c.Hold(ctx, "concert", inventory.HoldRequest{User: "alice", GA: &inventory.GARequest{Pool: "floor", Quantity: 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Ten minutes from now, but never past 15 minutes after the hold.
	x, err := c.Extend(ctx, "concert", h.ID, inventory.ExtendRequest{TTLSeconds: 600})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("extended by about", x.ExpiresAt.Sub(h.ExpiresAt).Round(time.Minute))
	x, _ = c.Extend(ctx, "concert", h.ID, inventory.ExtendRequest{TTLSeconds: 3600})
	fmt.Println("at most", x.ExpiresAt.Sub(x.CreatedAt))

	c.Release(ctx, "concert", h.ID, inventory.ReleaseRequest{})
	_, err = c.Extend(ctx, "concert", h.ID, inventory.ExtendRequest{})
	fmt.Println(errors.Is(err, inventory.ErrHoldReleased))
	// Output:
	// extended by about 5m0s
	// at most 15m0s
	// true
}
