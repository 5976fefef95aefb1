package redispersist

import (
	"context"
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
// block stay in the file, unapplied, and the next restart applies them
// together with the following block, so half a script comes back
// (fixed in Valkey by valkey-io/valkey#4342; redis-check-aof --fix cuts
// before the MULTI). A node whose setting cannot be read counts as
// loading a torn tail.
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
