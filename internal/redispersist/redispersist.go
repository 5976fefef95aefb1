package redispersist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Node is one master's persistence settings.
type Node struct {
	// Addr is the node's address as the client knows it.
	Addr string
	// AppendOnly and AppendFsync are the CONFIG GET values ("yes",
	// "always", ...); empty when Err is set.
	AppendOnly, AppendFsync string
	// AOFLoadTruncated is the CONFIG GET value of aof-load-truncated
	// ("yes", Redis's default, or "no"); empty when Err is set or the
	// server does not know the setting.
	AOFLoadTruncated string
	// Err is set when the settings could not be read (CONFIG is often
	// renamed or refused on managed Redis services).
	Err error
}

// AOF reports whether the node writes an append-only file.
func (n Node) AOF() bool { return n.Err == nil && n.AppendOnly == "yes" }

// FsyncAlways reports whether every acknowledged write is on disk before
// Redis replies (appendonly yes, appendfsync always).
func (n Node) FsyncAlways() bool { return n.AOF() && n.AppendFsync == "always" }

// LoadsTornTail reports whether the node, after a crash that tore the
// last write of its AOF, starts anyway from what it can read
// (aof-load-truncated yes, Redis's default) instead of refusing to start
// until redis-check-aof --fix has repaired the file. When the torn write
// was part of a MULTI/EXEC block (the effects of a Lua script that wrote
// more than once), Redis up to at least 7.x truncates the file inside
// the block instead of before it: the complete commands of the torn
// block stay in the file, unapplied, after an open MULTI. The next
// restart applies them together with everything written after them up
// to the next block's EXEC, so half a script comes back; with no EXEC
// after them, it reverts to before the MULTI and drops everything
// written since, acknowledged or not (fixed in Valkey by
// valkey-io/valkey#4342; redis-check-aof --fix cuts before the MULTI).
// A node whose setting cannot be read counts as loading a torn tail.
func (n Node) LoadsTornTail() bool { return n.AOF() && n.AOFLoadTruncated != "no" }

// Check reads the settings of the server behind c: the one node of a
// *redis.Client, every master of a *redis.ClusterClient. Other clients
// (rings, failover clients behind the interface) yield no nodes. The
// error is only for a cluster whose masters could not be listed.
func Check(ctx context.Context, c redis.UniversalClient) ([]Node, error) {
	read := func(ctx context.Context, n *redis.Client) Node {
		node := Node{Addr: n.Options().Addr}
		cfg, err := n.ConfigGet(ctx, "append*").Result()
		if err != nil {
			node.Err = err
			return node
		}
		node.AppendOnly, node.AppendFsync = cfg["appendonly"], cfg["appendfsync"]
		// A pattern of its own: CONFIG GET takes one pattern before Redis 7.
		// Unreadable, it stays empty and counts as yes.
		if cfg, err := n.ConfigGet(ctx, "aof-load-truncated").Result(); err == nil {
			node.AOFLoadTruncated = cfg["aof-load-truncated"]
		}
		return node
	}
	switch c := c.(type) {
	case *redis.Client:
		return []Node{read(ctx, c)}, nil
	case *redis.ClusterClient:
		var (
			mu    sync.Mutex
			nodes []Node
		)
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			node := read(ctx, n)
			mu.Lock()
			nodes = append(nodes, node)
			mu.Unlock()
			return nil
		})
		return nodes, err
	}
	return nil, nil
}

// Stakes says, for the messages of Enforce, what one store keeps in its
// Redis.
type Stakes struct {
	// Role names the Redis in messages: "inventory", "admission".
	Role string
	// Lost is what a restart of a Redis without an AOF loses
	// ("acknowledged holds and sales").
	Lost string
	// LostLast is what a crash loses when the AOF is fsynced only once a
	// second ("the last acknowledged sales").
	LostLast string
	// Torn is what a later restart does after a crash tore the AOF's
	// last write ("applies the first half of an inventory change (a seat
	// can be sold twice)").
	Torn string
}

// Enforce checks every master behind c (see Check) for what a store that
// acknowledges writes needs: appendonly yes, appendfsync always and
// aof-load-truncated no. A master without the AOF, or one that would
// start from a torn AOF (LoadsTornTail), makes Enforce return an error
// naming it when require is set, and is logged as an error otherwise; an
// appendfsync other than always, and settings that cannot be read, are
// logged as warnings. Every message says what to set; the torn-AOF one
// also says how to repair the file after a crash.
func Enforce(ctx context.Context, c redis.UniversalClient, log *slog.Logger, s Stakes, require bool) error {
	want := "make sure the " + s.Role + " Redis runs with appendonly yes, appendfsync always and aof-load-truncated no"
	nodes, err := Check(ctx, c)
	if err != nil {
		log.Warn("cannot list the Redis masters to check their persistence; "+want, "err", err)
	}
	role := strings.ToUpper(s.Role)
	var errs []error
	for _, n := range nodes {
		switch {
		case n.Err != nil:
			log.Warn("cannot read the Redis persistence settings (CONFIG GET refused); "+want, "addr", n.Addr, "err", n.Err)
		case !n.AOF() && require:
			// "Redis" is a proper noun, which Go's error-string
			// convention exempts; callers prefix the package
			// ("redisstore: Redis at … has appendonly off").
			//lint:ignore ST1005 the error starts with the proper noun Redis
			errs = append(errs, fmt.Errorf("Redis at %s has appendonly off: %s would be lost on a restart (set appendonly yes, appendfsync always)", n.Addr, s.Lost))
		case !n.AOF():
			log.Error("*** THE "+role+" REDIS HAS NO PERSISTENCE *** (appendonly no): a Redis restart loses "+s.Lost+"; run it with appendonly yes and appendfsync always", "addr", n.Addr)
		case !n.FsyncAlways():
			log.Warn("the "+s.Role+" Redis fsyncs its AOF only "+n.AppendFsync+": a crash can lose "+s.LostLast+"; use appendfsync always", "addr", n.Addr)
		}
		// A script that writes more than once reaches the AOF as one
		// MULTI/EXEC block; see LoadsTornTail for how Redis loads a torn
		// one.
		if n.LoadsTornTail() {
			msg := fmt.Sprintf("Redis at %s has aof-load-truncated yes: after a crash that tears the last write of its AOF, a later restart %s; "+
				"set aof-load-truncated no, and when Redis then refuses to start after a crash, run redis-check-aof --fix on its AOF manifest (it cuts the torn change whole)", n.Addr, s.Torn)
			if require {
				errs = append(errs, errors.New(msg))
			} else {
				log.Error("*** THE "+role+" REDIS CAN REPLAY HALF A CHANGE *** "+msg, "addr", n.Addr)
			}
		}
	}
	return errors.Join(errs...)
}
