package app

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/proxy"
)

// sinks builds the configured event sinks and returns the function the
// proxy tells of joins and admissions (nil without sinks).
func (w *Waitroom) sinks(ctx context.Context) (func(proxy.Notice), error) {
	if len(w.cfg.Sinks) == 0 {
		return nil, nil
	}
	env := plugins.Env{Log: w.log}
	for i, s := range w.cfg.Sinks {
		sink, err := plugins.Sinks.Build(ctx, s.Type, &s.Config, env)
		if err != nil {
			return nil, fmt.Errorf("sinks[%d] (%s): %w", i, s.Type, err)
		}
		w.sinkList = append(w.sinkList, sink)
		w.closers = append(w.closers, func() error {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return sink.Close(cctx)
		})
	}
	return func(n proxy.Notice) {
		data := map[string]any{}
		if n.Lane != "" {
			data["lane"] = n.Lane
		}
		w.publish(plugins.Event{Kind: n.Kind, Event: n.Event, Visitor: n.Visitor, At: time.Now().UTC(), Data: data})
	}, nil
}

// publish hands e to every sink.
func (w *Waitroom) publish(e plugins.Event) {
	for _, s := range w.sinkList {
		s.Publish(e)
	}
}

// newFeed builds the feed that tells the sinks of holds, sales and
// sell-outs of the linked inventory events (nil without sinks or links).
func (w *Waitroom) newFeed() *auditFeed {
	if len(w.sinkList) == 0 || w.link == nil {
		return nil
	}
	links := map[string][]string{}
	refresh := w.cfg.Serve.Inventory.Refresh.Std()
	handover := time.Duration(0)
	for _, room := range w.Engine.Events() {
		c, _ := w.Engine.Config(room)
		if c.InventoryEvent != "" {
			links[c.InventoryEvent] = append(links[c.InventoryEvent], room)
			handover = max(handover, w.Engine.Lease(room)+refresh)
		}
	}
	leads := func(room string) bool { return w.Engine.Figures(room).Leader }
	return newAuditFeed(w.link.c, links, leads, w.publish, w.start, refresh, handover, w.log)
}
