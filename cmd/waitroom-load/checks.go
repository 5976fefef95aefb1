package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/internal/ctxsleep"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// drawCheck is what the published draws say of the acknowledged joins.
type drawCheck struct {
	Checked  int      `json:"checked"`   // acknowledged joins with a place
	Lost     int      `json:"lost"`      // in a drawn tranche whose audit lacks them
	Undrawn  int      `json:"undrawn"`   // in a tranche still not drawn at the end
	Tranches int      `json:"tranches"`  // tranches read
	Unread   []string `json:"unread"`    // tranches whose audit could not be read
	LostIDs  []string `json:"lost_ids"`  // the first few lost visitors' hashes
	Drawn    uint64   `json:"in_draws"`  // entries in the draws read
	Admitted int      `json:"admitted"`  // of the checked
	WaitedMS int64    `json:"waited_ms"` // for draws due
}

// auditPage is the part of GET {prefix}/api/draws/{event}/{tranche} read here.
type auditPage struct {
	Drawn  bool     `json:"drawn"`
	Count  uint64   `json:"count"`
	Hashes []string `json:"hashes"`
	Next   *int     `json:"next"`
}

// checkDraws reads the draw audit of every tranche that holds an
// acknowledged join and counts the joins missing from it: every join
// answered 2xx must have a number in a draw. A tranche not yet drawn is
// waited for up to wait (its draw may be due while a store recovers).
func checkDraws(ctx context.Context, t *targets, event string, visits []*visit, wait time.Duration) drawCheck {
	type key struct {
		lane    string
		tranche int
	}
	by := map[key][]*visit{}
	var out drawCheck
	for _, v := range visits {
		if v.visitor == "" {
			continue // admitted at once (threshold mode): no place to draw
		}
		out.Checked++
		if !v.admittedAt.IsZero() {
			out.Admitted++
		}
		k := key{v.lane, v.tranche}
		by[k] = append(by[k], v)
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].tranche < keys[j].tranche })
	start := time.Now()
	deadline := start.Add(wait)
	for _, k := range keys {
		out.Tranches++
		hashes, drawn, err := readDraw(ctx, t, event, k.lane, k.tranche, deadline)
		name := fmt.Sprintf("%s/%d", k.lane, k.tranche)
		switch {
		case err != nil:
			out.Unread = append(out.Unread, name+": "+err.Error())
			continue
		case !drawn:
			out.Undrawn += len(by[k])
			continue
		}
		out.Drawn += uint64(len(hashes))
		for _, v := range by[k] {
			id, err := hex.DecodeString(v.visitor)
			sum := sha256.Sum256(id)
			h := hex.EncodeToString(sum[:])
			if err != nil || !hashes[h] {
				out.Lost++
				if len(out.LostIDs) < 5 {
					out.LostIDs = append(out.LostIDs, name+":"+h)
				}
			}
		}
	}
	out.WaitedMS = time.Since(start).Milliseconds()
	return out
}

// readDraw reads every page of one tranche's audit, waiting until
// deadline for it to be drawn.
func readDraw(ctx context.Context, t *targets, event, lane string, tranche int, deadline time.Time) (map[string]bool, bool, error) {
	home := tranche % len(t.bases)
	for {
		hashes := map[string]bool{}
		offset := 0
		for {
			q := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {"1000"}}
			if lane != "" && lane != "public" {
				q.Set("lane", lane)
			}
			path := "/_wr/api/draws/" + url.PathEscape(event) + "/" + strconv.Itoa(tranche) + "?" + q.Encode()
			a, err := t.do(ctx, &home, jar{}, "GET", path, nil)
			if err == nil && a.code != http.StatusOK {
				err = fmt.Errorf("%d %.200s", a.code, a.body)
			}
			var p auditPage
			if err == nil {
				err = json.Unmarshal(a.body, &p)
			}
			if err != nil {
				if time.Now().After(deadline) || ctx.Err() != nil {
					return nil, false, err
				}
				ctxsleep.Sleep(ctx, 500*time.Millisecond)
				continue
			}
			if !p.Drawn {
				if time.Now().After(deadline) || ctx.Err() != nil {
					return nil, false, nil
				}
				ctxsleep.Sleep(ctx, 500*time.Millisecond)
				break // and start again
			}
			for _, h := range p.Hashes {
				hashes[h] = true
			}
			if p.Next == nil {
				return hashes, true, nil
			}
			offset = *p.Next
		}
	}
}

// sellCheck is what the sidecar's audit stream and seat states say of
// the purchases.
type sellCheck struct {
	Orders      int      `json:"orders"` // confirms acknowledged to the crowd
	Entries     int      `json:"audit_entries"`
	SoldTwice   int      `json:"sold_twice"`    // confirms of a seat already sold (no cancel between)
	InTwoOrders int      `json:"in_two_orders"` // seats in two acknowledged orders
	NotSold     int      `json:"not_sold"`      // seats of acknowledged orders not sold at the end
	Examples    []string `json:"examples"`
	Err         string   `json:"error,omitempty"`
}

// checkSales replays the sidecar's audit stream of the event: a seat
// confirmed while already sold is a seat sold twice. It also checks that
// no seat is in two acknowledged orders and that every seat of one is
// sold (by the orders the sidecar reports).
func checkSales(ctx context.Context, c *client.Client, event string, orders []inventory.Order) sellCheck {
	out := sellCheck{Orders: len(orders)}
	sold := map[string]string{} // seat → order
	after := ""
	for {
		p, err := c.Audit(ctx, event, after, inventory.MaxAuditPage)
		if err != nil {
			out.Err = "audit: " + err.Error()
			break
		}
		for _, e := range p.Entries {
			out.Entries++
			switch e.Action {
			case inventory.ActionConfirm:
				for _, s := range e.Seats {
					if prev, ok := sold[s]; ok && prev != e.OrderID {
						out.SoldTwice++
						if len(out.Examples) < 5 {
							out.Examples = append(out.Examples, fmt.Sprintf("seat %s: order %s, then %s", s, prev, e.OrderID))
						}
					}
					sold[s] = e.OrderID
				}
			case inventory.ActionCancel:
				for _, s := range e.Seats {
					delete(sold, s)
				}
			}
		}
		if len(p.Entries) == 0 || p.Next == "" || p.Next == after {
			break
		}
		after = p.Next
	}
	mine := map[string]string{}
	for _, o := range orders {
		for _, s := range o.Seats {
			if prev, ok := mine[s]; ok && prev != o.ID {
				out.InTwoOrders++
			}
			mine[s] = o.ID
			if out.Err == "" && sold[s] != o.ID {
				out.NotSold++
				if len(out.Examples) < 5 {
					out.Examples = append(out.Examples, fmt.Sprintf("seat %s of acknowledged order %s: the audit has it sold to %q", s, o.ID, sold[s]))
				}
			}
		}
	}
	return out
}
