package app

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/inventory"
)

// The metrics the alerts in deploy/prometheus/alerts.yaml and the
// dashboard in deploy/grafana/waitroom.json need beyond the proxy's and
// the sidecar's own: whether the stores answer, when the served
// certificate expires, each event's controller floor, ETA at the back of
// the queue, seats left, and whether its linked inventory is defined.
var (
	descStoreUp = prometheus.NewDesc("waitroom_store_up",
		"1 when the store answered its last probe (every 5 s), 0 when it did not: admission (Redis) on waitroom serve, inventory on the sidecar.",
		[]string{"store"}, nil)
	descCertExpiry = prometheus.NewDesc("waitroom_tls_certificate_expiry_timestamp_seconds",
		"When the certificate served on serve.tls.listen stops being valid (its NotAfter), in unix seconds: the file's (subject its common name), or each serve.tls.acme domain's once obtained.",
		[]string{"listener", "subject"}, nil)
	descMinActive = prometheus.NewDesc("waitroom_controller_min_active",
		"The floor of the admission limit (events[].controller.min_active): a limit held there means the controller keeps cutting.",
		[]string{"event"}, nil)
	descETABack = prometheus.NewDesc("waitroom_queue_eta_back_seconds",
		"The estimated wait of a visitor at the back of the queue now (the longest of the lanes'); absent while there is no admission rate to estimate from, 0 with nobody waiting.",
		[]string{"event"}, nil)
	descSeatsLeft = prometheus.NewDesc("waitroom_event_seats_left",
		"Seats the event's linked inventory has left (available or held), as last read from the sidecar; absent while unknown.",
		[]string{"event", "inventory_event"}, nil)
	descInvUp = prometheus.NewDesc("waitroom_event_inventory_up",
		"1 when the last read of the event's linked inventory from the sidecar was answered, 0 when it failed.",
		[]string{"event", "inventory_event"}, nil)
	descInvMissing = prometheus.NewDesc("waitroom_event_inventory_missing",
		"1 when the sidecar answered that the event's linked inventory event is not defined in its store.",
		[]string{"event", "inventory_event"}, nil)
)

// probePeriod is how often a storeProbe pings.
const probePeriod = 5 * time.Second

// storeProbe pings one store every probePeriod and keeps whether it
// answered within readyTimeout. Safe for concurrent use.
type storeProbe struct {
	name string
	ping func(ctx context.Context) error
	up   atomic.Int32 // -1 not probed yet, 0 down, 1 up
}

func newStoreProbe(name string, ping func(ctx context.Context) error) *storeProbe {
	p := &storeProbe{name: name, ping: ping}
	p.up.Store(-1)
	return p
}

func (p *storeProbe) probe(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := p.ping(cctx); err != nil {
		if ctx.Err() == nil {
			p.up.Store(0)
		}
		return
	}
	p.up.Store(1)
}

func (p *storeProbe) run(ctx context.Context) {
	t := time.NewTicker(probePeriod)
	defer t.Stop()
	for {
		p.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *storeProbe) Describe(ch chan<- *prometheus.Desc) { ch <- descStoreUp }

func (p *storeProbe) Collect(ch chan<- prometheus.Metric) {
	if v := p.up.Load(); v >= 0 {
		ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, float64(v), p.name)
	}
}

// certInfo is a served certificate's expiry, for the metrics.
type certInfo struct {
	listener, subject string
	notAfter          time.Time
}

// certOf reads the leaf of the first certificate of tc.
func certOf(listener string, tc *tls.Config) (certInfo, bool) {
	if tc == nil || len(tc.Certificates) == 0 || tc.Certificates[0].Leaf == nil {
		return certInfo{}, false
	}
	leaf := tc.Certificates[0].Leaf
	return certInfo{listener: listener, subject: leaf.Subject.CommonName, notAfter: leaf.NotAfter}, true
}

// opsCollector exports the serving process's additions above.
type opsCollector struct{ w *Waitroom }

func (c opsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCertExpiry, descMinActive, descETABack, descSeatsLeft, descInvUp, descInvMissing} {
		ch <- d
	}
}

func (c opsCollector) Collect(ch chan<- prometheus.Metric) {
	w := c.w
	if ci := w.cert.Load(); ci != nil {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, float64(ci.notAfter.Unix()), ci.listener, ci.subject)
	}
	if w.acme != nil {
		// Each serve.tls.acme domain's certificate, once obtained.
		for d, t := range w.acme.Expiry() {
			ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, float64(t.Unix()), "serve.tls", d)
		}
	}
	for _, id := range w.Engine.Events() {
		cfg, err := w.Engine.Config(id)
		if err != nil {
			continue
		}
		floor := cfg.Controller.MinActive
		if floor <= 0 {
			floor = admission.DefaultMinActive
		}
		ch <- prometheus.MustNewConstMetric(descMinActive, prometheus.GaugeValue, float64(floor), id)
		if eta, ok := etaBack(w.Engine.Figures(id)); ok {
			ch <- prometheus.MustNewConstMetric(descETABack, prometheus.GaugeValue, float64(eta), id)
		}
		if cfg.InventoryEvent == "" || w.link == nil {
			continue
		}
		inv := cfg.InventoryEvent
		if n, ok := w.link.Remaining(inv); ok {
			ch <- prometheus.MustNewConstMetric(descSeatsLeft, prometheus.GaugeValue, float64(n), id, inv)
		}
		if r, ok := w.link.read(inv); ok {
			ch <- prometheus.MustNewConstMetric(descInvUp, prometheus.GaugeValue, b2f(r.ok), id, inv)
			ch <- prometheus.MustNewConstMetric(descInvMissing, prometheus.GaugeValue, b2f(r.missing), id, inv)
		}
	}
}

// etaBack is the estimated wait at the back of an event's queue in
// seconds: the longest of its lanes', 0 with nobody waiting; false while
// a lane with visitors has no rate to estimate from.
func etaBack(f admission.Figures) (int, bool) {
	longest := 0
	for _, l := range f.Lanes {
		ahead := float64(l.Waiting) + float64(l.Undrawn)
		if ahead <= 0 {
			continue
		}
		e := admission.EstimateETA(ahead, 0, l.RateLow, l.RateMid, l.RateHigh)
		if !e.Known() {
			return 0, false
		}
		longest = max(longest, e.Seconds)
	}
	return longest, true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// registerOps registers the additions with w's registry and returns the
// store probes to run (the admission store's, when it is Redis).
func (w *Waitroom) registerOps() ([]*storeProbe, error) {
	if w.reg == nil {
		return nil, nil
	}
	if err := w.reg.Register(opsCollector{w}); err != nil {
		return nil, err
	}
	if w.feed != nil {
		w.feed.entries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_inventory_audit_entries_total",
			Help: "Entries of the linked inventory events' audit streams read since this process started, by inventory event and action (hold, confirm, release, expire, extend, cancel, define): expire counts abandoned holds, however they expired. Every replica counts them."},
			[]string{"inventory_event", "action"})
		if err := w.reg.Register(w.feed.entries); err != nil {
			return nil, err
		}
		// Every series from 0, so that increase() sees the first entries.
		for _, st := range w.feed.streams {
			for _, a := range []string{inventory.ActionHold, inventory.ActionConfirm, inventory.ActionRelease,
				inventory.ActionExpire, inventory.ActionExtend, inventory.ActionCancel} {
				w.feed.entries.WithLabelValues(st.event, a)
			}
		}
	}
	var probes []*storeProbe
	if w.admissionRedis != nil {
		probes = append(probes, newStoreProbe("admission", w.admissionRedis.Ping))
	}
	for _, p := range probes {
		if err := w.reg.Register(p); err != nil {
			return nil, err
		}
	}
	return probes, nil
}
