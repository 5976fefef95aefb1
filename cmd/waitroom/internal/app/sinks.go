package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/webhook"
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
	if w.reg != nil {
		if err := w.reg.Register(sinkCollector(w.cfg.Sinks, w.sinkList)); err != nil {
			return nil, err
		}
	}
	return func(n proxy.Notice) {
		data := map[string]any{}
		if n.Lane != "" {
			data["lane"] = n.Lane
		}
		w.publish(plugins.Event{Kind: n.Kind, Event: n.Event, Visitor: n.Visitor, At: time.Now().UTC(), Data: data})
	}, nil
}

// eventID names an event for the sinks by what it is about, so that
// every replica, and a leader sending again what the last one may have
// sent, gives it the same id: "evt_" and 32 hex digits of the SHA-256 of
// the parts.
func eventID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "evt_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// publish hands e to every sink.
func (w *Waitroom) publish(e plugins.Event) {
	for _, s := range w.sinkList {
		s.Publish(e)
	}
}

// newFeed builds the feed that tells the sinks of holds, sales and
// sell-outs of the linked inventory events, and counts their audit
// entries (nil without links).
func (w *Waitroom) newFeed() *auditFeed {
	if w.link == nil {
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

// sinkStatser is a sink that counts its deliveries (the webhook sink).
type sinkStatser interface{ Stats() webhook.Stats }

var (
	descSinkEvents = prometheus.NewDesc("waitroom_sink_events_total",
		"Events handed to an event sink, by sink (its index in sinks[] and type) and outcome: delivered, dropped (the bounded queue was full, or the sink closed), failed (given up on after its attempts or a final answer).",
		[]string{"sink", "type", "outcome"}, nil)
	descSinkQueued = prometheus.NewDesc("waitroom_sink_queue_length",
		"Events waiting in an event sink's queue for delivery.", []string{"sink", "type"}, nil)
)

// sinkCollector exports the counters of the sinks that keep them.
func sinkCollector(cfgs []config.Sink, sinks []plugins.Sink) prometheus.Collector {
	return collectFunc{describe: []*prometheus.Desc{descSinkEvents, descSinkQueued}, collect: func(ch chan<- prometheus.Metric) {
		for i, s := range sinks {
			st, ok := s.(sinkStatser)
			if !ok {
				continue
			}
			n, typ := strconv.Itoa(i), cfgs[i].Type
			c := st.Stats()
			for _, o := range []struct {
				name string
				v    uint64
			}{{"delivered", c.Delivered}, {"dropped", c.Dropped}, {"failed", c.Failed}} {
				ch <- prometheus.MustNewConstMetric(descSinkEvents, prometheus.CounterValue, float64(o.v), n, typ, o.name)
			}
			ch <- prometheus.MustNewConstMetric(descSinkQueued, prometheus.GaugeValue, float64(c.Queued), n, typ)
		}
	}}
}

// collectFunc is a collector made of its descriptions and a function.
type collectFunc struct {
	describe []*prometheus.Desc
	collect  func(ch chan<- prometheus.Metric)
}

func (c collectFunc) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.describe {
		ch <- d
	}
}

func (c collectFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
