package jetstream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Partition ownership for a crawl spread over nodes: each of P partitions
// (partition = hash(host) mod P) is owned by at most one node at a time, by
// a lease in a JetStream key-value bucket.
//
//   - A lease is the key "p.<N>", holding the owner's name. A node takes a
//     free partition with Create, which fails if the key exists, and renews
//     it with Update at the revision it last wrote, which fails if anyone
//     else wrote since. The revision at which a node took the partition is
//     its epoch: a fencing token that grows with every change of owner.
//   - The bucket's TTL removes a lease not renewed for TTL: a dead node's
//     partitions come free by themselves.
//   - A node fences itself: once its last successful renewal of a lease is
//     FenceAfter (TTL/2) old, it gives the partition up locally (OnRelease)
//     whether or not it can reach NATS. Another node can take the lease
//     only once the server has dropped it, TTL after the last renewal the
//     server saw, which is later than the cut node's fence by at least
//     TTL - FenceAfter minus one round trip. So a node cut off from the
//     cluster stops within FenceAfter (plus a tick) and before any other
//     node starts.
//   - Nodes announce themselves under "node.<name>", renewed like leases,
//     and each aims at ceil(P / live nodes) partitions: it releases its
//     extra ones when a node joins (OnRelease first, then the key, so the
//     new owner starts after the old one stopped) and takes free ones when a
//     node leaves or dies.
//
// Why leases in a KV bucket rather than pinned consumers: a lease's
// revision is a fencing token weft can hand to the crawl state it writes,
// the bucket is one place an operator (and the API) can read who owns what,
// and the handoff order (stop, then release) is the node's to choose.

// Defaults of OwnersConfig.
const (
	DefaultOwnersBucket = "WEFT_OWNERS"
	DefaultLeaseTTL     = 10 * time.Second
)

// OwnersConfig configures a node's share of the partitions.
type OwnersConfig struct {
	// Node is this node's name, unique in the cluster.
	Node string
	// Partitions is P, fixed for the crawl.
	Partitions int
	// Bucket is the KV bucket of leases; "" means DefaultOwnersBucket. It
	// is created if missing.
	Bucket string
	// TTL is a lease's life without renewal; zero means DefaultLeaseTTL.
	// Leases are renewed every TTL/6, and a node fences itself after TTL/2
	// without a successful renewal.
	TTL time.Duration
	// Replicas of the bucket when this node creates it; zero means 1.
	Replicas int
	// OnAcquire is called when the node has taken partition p at epoch:
	// it may start fetching its hosts. OnRelease is called when it must
	// stop (lost, fenced, handed over or stopped), and must return only
	// once no request to the partition's hosts is in flight; the lease is
	// given back after it returns. Both are called from one goroutine.
	OnAcquire func(p int, epoch uint64)
	OnRelease func(p int)
	Logger    *slog.Logger
}

// Owners runs one node's leases.
type Owners struct {
	cfg   OwnersConfig
	kv    jetstream.KeyValue
	fence time.Duration
	tick  time.Duration

	mu       sync.Mutex
	held     map[int]*lease
	handoffs int

	stop chan struct{}
	done chan struct{}
}

type lease struct {
	epoch  uint64    // revision at which it was taken
	rev    uint64    // revision last written
	lastOK time.Time // when the last renewal was acknowledged (monotonic)
}

// StartOwners creates the bucket if needed, announces the node and starts
// taking its share of partitions.
func StartOwners(ctx context.Context, js jetstream.JetStream, cfg OwnersConfig) (*Owners, error) {
	if cfg.Node == "" || strings.ContainsAny(cfg.Node, ". *>") {
		return nil, fmt.Errorf("jetstream: node name %q: want a non-empty name without dots, spaces or wildcards", cfg.Node)
	}
	if cfg.Partitions < 1 {
		return nil, fmt.Errorf("jetstream: %d partitions", cfg.Partitions)
	}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultOwnersBucket
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultLeaseTTL
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnAcquire == nil {
		cfg.OnAcquire = func(int, uint64) {}
	}
	if cfg.OnRelease == nil {
		cfg.OnRelease = func(int) {}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Bucket, TTL: cfg.TTL, Replicas: cfg.Replicas, History: 1})
	if err != nil {
		return nil, fmt.Errorf("jetstream: lease bucket %s: %w", cfg.Bucket, err)
	}
	o := &Owners{cfg: cfg, kv: kv, fence: cfg.TTL / 2, tick: cfg.TTL / 6, held: map[int]*lease{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go o.run()
	return o, nil
}

// Owned returns the partitions this node holds and may fetch, with their
// epochs.
func (o *Owners) Owned() map[int]uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[int]uint64, len(o.held))
	for p, l := range o.held {
		out[p] = l.epoch
	}
	return out
}

// Handoffs counts the partitions this node has taken or given up.
func (o *Owners) Handoffs() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handoffs
}

// Stop gives every partition up (OnRelease, then the lease) and the node's
// announcement, so that the others take them at once: a graceful leave.
func (o *Owners) Stop(ctx context.Context) {
	close(o.stop)
	<-o.done
	o.mu.Lock()
	parts := slices.Sorted(maps.Keys(o.held))
	o.mu.Unlock()
	for _, p := range parts {
		o.release(ctx, p, true)
	}
	_ = o.kv.Delete(ctx, nodeKey(o.cfg.Node))
}

// Kill stops the node without giving anything up, as a crash would: its
// leases stay until their TTL. For tests and for a node that must not
// touch the bucket any more.
func (o *Owners) Kill() {
	close(o.stop)
	<-o.done
}

func (o *Owners) run() {
	defer close(o.done)
	t := time.NewTicker(o.tick)
	defer t.Stop()
	for {
		o.round()
		select {
		case <-t.C:
		case <-o.stop:
			return
		}
	}
}

// round renews, fences, and moves the node toward its share.
func (o *Owners) round() {
	ctx, cancel := context.WithTimeout(context.Background(), o.tick)
	defer cancel()
	_, _ = o.kv.Put(ctx, nodeKey(o.cfg.Node), []byte(time.Now().UTC().Format(time.RFC3339Nano)))

	o.mu.Lock()
	parts := slices.Sorted(maps.Keys(o.held))
	o.mu.Unlock()
	for _, p := range parts {
		o.renew(ctx, p)
	}

	share, err := o.share(ctx)
	if err != nil {
		return // cannot see the cluster: keep what is held, fenced by time
	}
	o.mu.Lock()
	n := len(o.held)
	parts = slices.Sorted(maps.Keys(o.held))
	o.mu.Unlock()
	for i := len(parts) - 1; n > share && i >= 0; i-- {
		o.release(ctx, parts[i], true) // a node joined: hand the extra ones over
		n--
	}
	if n < share {
		o.acquire(ctx, share-n)
	}
}

// renew writes the lease again at the revision this node last wrote; a
// conflict means it is lost. A lease not renewed for FenceAfter is given
// up locally, reachable or not.
func (o *Owners) renew(ctx context.Context, p int) {
	o.mu.Lock()
	l := o.held[p]
	o.mu.Unlock()
	if l == nil {
		return
	}
	rev, err := o.kv.Update(ctx, partKey(p), []byte(o.cfg.Node), l.rev)
	switch {
	case err == nil:
		o.mu.Lock()
		l.rev, l.lastOK = rev, time.Now()
		o.mu.Unlock()
		return
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyNotFound):
		// Someone else wrote it, or it expired: it is not ours any more.
		o.cfg.Logger.Warn("partition lease lost", "partition", p, "err", err)
		o.release(ctx, p, false)
		return
	}
	if time.Since(l.lastOK) >= o.fence {
		o.cfg.Logger.Warn("partition lease not renewed in time; fencing", "partition", p, "err", err)
		o.release(ctx, p, false)
	}
}

// release stops the partition (OnRelease) and, when giveBack, deletes its
// lease so that another node may take it at once.
func (o *Owners) release(ctx context.Context, p int, giveBack bool) {
	o.mu.Lock()
	l := o.held[p]
	delete(o.held, p)
	if l != nil {
		o.handoffs++
	}
	o.mu.Unlock()
	if l == nil {
		return
	}
	o.cfg.OnRelease(p)
	if giveBack {
		if err := o.kv.Delete(ctx, partKey(p), jetstream.LastRevision(l.rev)); err != nil {
			o.cfg.Logger.Info("partition lease not given back; it expires", "partition", p, "err", err)
		}
	}
}

// acquire takes up to n free partitions, looking from a place of its own
// so that nodes starting together do not all race for partition 0.
func (o *Owners) acquire(ctx context.Context, n int) {
	h := fnv.New32a()
	h.Write([]byte(o.cfg.Node))
	start := int(h.Sum32() % uint32(o.cfg.Partitions))
	for i := 0; i < o.cfg.Partitions && n > 0; i++ {
		p := (start + i) % o.cfg.Partitions
		o.mu.Lock()
		_, mine := o.held[p]
		o.mu.Unlock()
		if mine {
			continue
		}
		rev, err := o.kv.Create(ctx, partKey(p), []byte(o.cfg.Node))
		if err != nil {
			continue // held by another node, or the bucket cannot be reached
		}
		o.mu.Lock()
		o.held[p] = &lease{epoch: rev, rev: rev, lastOK: time.Now()}
		o.handoffs++
		o.mu.Unlock()
		o.cfg.OnAcquire(p, rev)
		n--
	}
}

// share is ceil(P / live nodes), this node counted.
func (o *Owners) share(ctx context.Context) (int, error) {
	keys, err := o.kv.ListKeys(ctx, jetstream.MetaOnly())
	if err != nil {
		return 0, err
	}
	defer keys.Stop()
	nodes := 0
	self := false
	for k := range keys.Keys() {
		if name, ok := strings.CutPrefix(k, "node."); ok {
			nodes++
			self = self || name == o.cfg.Node
		}
	}
	if !self {
		nodes++
	}
	return (o.cfg.Partitions + nodes - 1) / nodes, nil
}

func partKey(p int) string       { return "p." + strconv.Itoa(p) }
func nodeKey(node string) string { return "node." + node }
