// Package cluster runs one node of a crawl spread over several machines
// on NATS JetStream: the node owns a share of the partitions (package
// jetstream's leases), fetches only their hosts, sends every URL it finds
// to the log of its host's partition, and takes the URLs of the
// partitions it owns from there.
//
// A partition's state that outlives its node is two logs, every URL
// found for its hosts (weft.links.<p>) and every visit made
// (weft.done.<p>: the URL's record after the fetch), and a key-value
// bucket of each host's last clock worth keeping (WEFT_HOSTS: a
// Crawl-delay, a backoff, failures). Each log keeps one message per URL
// (a subject per URL, one message per subject), so it grows with the
// URLs, not with the pages that link to them or the visits. The owner
// compacts a partition's logs now and then into a snapshot in object
// storage and purges what the snapshot covers (snapshot.go), so that the
// logs hold only what came since. A node that takes a partition over
// installs the kept clocks, each held one gap from now (their owner may
// have died just after a request), holds every other host of the
// partition for one delay, adopts the visits (the snapshot's, then the
// log's) into its own store, and replays the URLs: its crawl's seen set
// keeps each once, and what another node fetched is not fetched again (in
// continuous mode, not before it is due). After a crash, at most the
// requests the dead node had in flight are made again.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/live"
)

// Names of the streams and buckets a cluster uses.
const (
	LinksStream = "WEFT_LINKS"
	DoneStream  = "WEFT_DONE"
	HostsBucket = "WEFT_HOSTS"
)

// Config configures a node.
type Config struct {
	Node       string
	Partitions int
	// TTL of the partition leases; zero means jetstream.DefaultLeaseTTL.
	TTL time.Duration
	// Replicas of the streams and buckets this node creates; zero means 1.
	Replicas int
	// Crawl is the node's crawl; its Partitions, KeepAlive, Cluster and
	// SharedVisits are the node's to set.
	Crawl crawl.Config
	// Snapshots is where the partitions' snapshots are kept; nil means
	// the JetStream object store WEFT_SNAPSHOTS. Every node of a crawl
	// must be given the same.
	Snapshots Snapshots
	// A partition the node holds is snapshotted once its logs have grown
	// by SnapshotAfter messages, or SnapshotEvery after its last snapshot
	// if they grew at all. Zero means DefaultSnapshotEvery and
	// DefaultSnapshotAfter; a negative SnapshotEvery means the node makes
	// none (it still reads those others made).
	SnapshotEvery time.Duration
	SnapshotAfter int
	// Drain makes Run return once the whole cluster's crawl has drained
	// (drain.go), a crawl that ends; without it the node crawls until
	// stopped (a continuous crawl).
	Drain  bool
	Logger *slog.Logger

	// Knobs tests turn (snapshot.go); zero means the default.
	lookEvery   time.Duration // how often a node that makes no snapshots looks for others' (DefaultSnapshotEvery)
	snapTailMax int           // messages one snapshot reads past the last (200,000)
	objectIdle  time.Duration // a stored object's read ends after this without a byte (30 s)
	objectRate  float64       // bytes per second a stored object is given on top of objectIdle (1 MiB/s)
}

// setKnobs defaults the knobs tests turn.
func (c *Config) setKnobs() {
	if c.lookEvery == 0 {
		c.lookEvery = DefaultSnapshotEvery
	}
	if c.snapTailMax == 0 {
		c.snapTailMax = 200_000
	}
	if c.objectIdle == 0 {
		c.objectIdle = 30 * time.Second
	}
	if c.objectRate == 0 {
		c.objectRate = 1 << 20
	}
}

// inbound is what a node calls in its crawl (a *crawl.Crawler), from any
// goroutine: crawl.Cluster is the other way.
type inbound interface {
	// Offer judges URLs found (by any node) for hosts the node owns, as
	// if its crawl had found them, and queues those new.
	Offer(urls []crawl.Offered) error
	// Adopt takes over the visits other nodes made of a partition taken
	// over, so that its URLs replayed next are not queued again for them.
	Adopt(vs []crawl.Visited) error
	// HoldPartition keeps the hosts of partition p from being leased
	// (on), or lets them be: the node holds the partitions it does not own.
	HoldPartition(p int, on bool)
	// ReleasePartition holds p and returns, once no lease on its hosts is
	// out, the clocks they must keep, for the next owner's TakeOver.
	ReleasePartition(p int) map[string]frontier.Clock
	// TakeOver makes every host of p wait one gap from now, over the
	// clocks its last owner kept; before p is let go.
	TakeOver(p int, clocks map[string]frontier.Clock)
	// HopFor follows a robots.txt redirect hop onto a host the node
	// owns, for the node whose robots.txt it is.
	HopFor(ctx context.Context, forHost, target, targetHost string, hops int, local bool) (crawl.RobotsAnswer, error)
	// EndDrained ends the crawl as drained, the whole cluster's being
	// done; Running reports whether it takes work (Offer, Adopt).
	EndDrained()
	Running() bool
}

// Node is one running node.
type Node struct {
	cfg    Config
	js     jetstream.JetStream
	hosts  jetstream.KeyValue // per host: its last clock worth keeping (crawl.Cluster.Clocked)
	crawl  *crawl.Crawler
	in     inbound // n.crawl as the cluster calls it
	owners *wjs.Owners
	log    *slog.Logger

	snaps     jetstream.KeyValue // per partition: its snapshot (snapPointer)
	objects   Snapshots
	snapDir   string       // the node's copies of its partitions' snapshots
	snapshots atomic.Int64 // snapshots this node made

	mu        sync.Mutex
	consumers map[int]*taking                   // per partition taken: stops its consumer and its pending unhold
	unkept    map[int]map[string]frontier.Clock // per partition: clocks not written to the hosts bucket yet
	hopSubs   map[int]*nats.Subscription        // per partition leased: robots.txt hops other nodes ask of it
	ended     bool                              // Run has returned: no partition is taken any more
	stopped   bool                              // Stop or Kill was called, or the crawl drained
	api       string                            // announced: where the node's API answers
	look      *drainState                       // announced: the node's last look at its part (Config.Drain)
	activity  atomic.Int64                      // URLs offered, links and visits logged: moves with any work
	wg        sync.WaitGroup

	life    context.Context // ends with Kill or Run: retries stop waiting
	endLife context.CancelFunc
}

// taking is a partition taken: stop ends the reads of its past, its
// consumer, its snapshots (ctx) and, if it has not come yet, the end of
// its hold.
type taking struct {
	stop  context.CancelFunc
	ctx   context.Context
	epoch uint64        // the lease it took over
	read  chan struct{} // closed once takeOver has returned
	snap  *partSnap     // set (under n.mu) once its past is read; nil before
	open  bool          // under n.mu: its hosts may be leased (one delay after the takeover)
	// reading is set once its snapshot's URLs are offered and its links
	// log is being read.
	reading atomic.Bool
}

// Start makes the streams if needed, opens the crawl and joins the
// cluster. Run the crawl with Run.
func Start(ctx context.Context, js jetstream.JetStream, cfg Config) (*Node, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.SnapshotEvery == 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.SnapshotAfter <= 0 {
		cfg.SnapshotAfter = DefaultSnapshotAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.setKnobs()
	// The delay is checked against the lease TTL before the node joins
	// (the crawl's bucket, if it exists, has the TTL that holds).
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = wjs.DefaultLeaseTTL
	}
	var bucketTTL time.Duration
	if err := wjs.Await(ctx, cfg.Logger, "the lease bucket's TTL", func(ctx context.Context) error {
		kv, err := js.KeyValue(ctx, wjs.DefaultOwnersBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil // the first node of the crawl: its TTL will hold
		}
		if err != nil {
			return err
		}
		st, err := kv.Status(ctx)
		if err == nil {
			bucketTTL = st.TTL()
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if bucketTTL > 0 {
		ttl = bucketTTL
	}
	if delay := cfg.Crawl.WithDefaults().Delay; delay >= ttl/2 {
		// After a crash, the lease's TTL is all that parts the dead
		// node's last request to a host from the next owner's first (at
		// least TTL/2), for hosts with no clock kept (no Crawl-delay,
		// no backoff).
		return nil, fmt.Errorf("cluster: the delay %v must be under half the lease TTL %v", delay, ttl)
	}
	n := &Node{cfg: cfg, js: js, log: cfg.Logger, consumers: map[int]*taking{}, unkept: map[int]map[string]frontier.Clock{}, hopSubs: map[int]*nats.Subscription{}}
	n.life, n.endLife = context.WithCancel(context.Background())
	for name, subj := range map[string]string{LinksStream: "weft.links.>", DoneStream: "weft.done.>"} {
		// One message per subject, a subject per URL: the last word on
		// each URL is all a new owner needs.
		st, err := wjs.OpenStream(ctx, js, cfg.Logger, jetstream.StreamConfig{Name: name, Subjects: []string{subj}, Storage: jetstream.FileStorage,
			Replicas: cfg.Replicas, Duplicates: 2 * time.Minute, MaxMsgsPerSubject: 1})
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		if st.CachedInfo().Config.MaxMsgsPerSubject != 1 {
			// Made by an earlier weft, whose subjects these filters miss.
			return nil, fmt.Errorf("cluster: stream %s keeps more than one message per subject: it was made by an earlier weft; start the crawl on a NATS of its own", name)
		}
	}
	var err error
	if n.hosts, err = openBucket(ctx, js, cfg.Logger, jetstream.KeyValueConfig{Bucket: HostsBucket, Replicas: cfg.Replicas}); err != nil {
		return nil, err
	}
	if n.snaps, err = openBucket(ctx, js, cfg.Logger, jetstream.KeyValueConfig{Bucket: SnapsBucket, Replicas: cfg.Replicas}); err != nil {
		return nil, err
	}
	if n.objects = cfg.Snapshots; n.objects == nil {
		obs, err := wjs.OpenObjectStore(ctx, js, cfg.Logger, jetstream.ObjectStoreConfig{Bucket: ObjectsBucket, Storage: jetstream.FileStorage, Replicas: cfg.Replicas})
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		n.objects = natsObjects{obs}
	}
	n.snapDir = filepath.Join(cfg.Crawl.DataDir, "snapshots")
	if err := os.MkdirAll(n.snapDir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	// Files being made or fetched when the node last stopped: a crash
	// leaves them.
	if old, err := filepath.Glob(filepath.Join(n.snapDir, "*")); err == nil {
		for _, f := range old {
			if b := filepath.Base(f); strings.HasPrefix(b, "make-") || strings.HasPrefix(b, "fetch-") {
				os.Remove(f)
			}
		}
	}

	cc := cfg.Crawl
	cc.Partitions = cfg.Partitions
	cc.KeepAlive = true
	cc.Cluster = n
	cc.SharedVisits = true
	if n.crawl, err = crawl.New(cc); err != nil {
		return nil, err
	}
	n.in = n.crawl
	if got := n.crawl.Partitions(); got != cfg.Partitions {
		// A data directory made for another partition count: its hosts'
		// state sits in other partitions than the cluster's.
		n.crawl.Discard()
		return nil, fmt.Errorf("cluster: the crawl in %s has %d partitions, the cluster %d: give the node a data directory of its own", cc.DataDir, got, cfg.Partitions)
	}
	for p := range cfg.Partitions {
		n.in.HoldPartition(p, true)
	}
	n.owners, err = wjs.StartOwners(ctx, js, wjs.OwnersConfig{Node: cfg.Node, Partitions: cfg.Partitions, TTL: cfg.TTL,
		Replicas: cfg.Replicas, Logger: cfg.Logger, OnAcquire: n.acquire, OnRelease: n.release})
	if err != nil {
		n.crawl.Discard()
		return nil, err
	}
	n.wg.Go(n.snapshotLoop)
	return n, nil
}

// openBucket opens a KV bucket, made with cfg if it does not exist yet,
// waiting for a cluster getting ready (jetstream.OpenKV).
func openBucket(ctx context.Context, js jetstream.JetStream, log *slog.Logger, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := wjs.OpenKV(ctx, js, log, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return kv, nil
}

// Run crawls until ctx is done; Stop the node first to hand its
// partitions over. A crawl that ends otherwise (an error) kills the
// node's ownership, so that its leases run out and others take over.
func (n *Node) Run(ctx context.Context) (crawl.Summary, error) {
	dctx, stopDrain := context.WithCancel(n.life)
	var drain sync.WaitGroup
	if n.cfg.Drain {
		drain.Go(func() { n.drainLoop(dctx) })
	}
	sum, err := n.crawl.Run(ctx)
	stopDrain()
	drain.Wait()
	n.mu.Lock()
	n.ended = true
	stopped := n.stopped
	n.mu.Unlock()
	if !stopped {
		n.Kill()
	}
	n.endLife()
	n.stopConsumers()
	n.wg.Wait()
	return sum, err
}

// Stop hands every partition over (gracefully: requests in flight end,
// clocks are left for the next owners), then the crawl may be stopped.
func (n *Node) Stop(ctx context.Context) {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.owners.Stop(ctx)
}

// Kill stops owning at once, as a crash would: no request starts any more
// and the leases run out.
func (n *Node) Kill() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.endLife() // first: an acquire waiting on NATS or the crawl gives up, so that the owners' callbacks drain
	n.owners.Kill()
	n.stopConsumers()
}

// Crawler is the node's crawl, for the operator API.
func (n *Node) Crawler() *crawl.Crawler { return n.crawl }

// Name is the node's name in the cluster.
func (n *Node) Name() string { return n.cfg.Node }

// Handoffs counts the partitions the node has taken or given up.
func (n *Node) Handoffs() int { return n.owners.Handoffs() }

// Snapshots counts the snapshots of its partitions' logs the node made.
func (n *Node) Snapshots() int64 { return n.snapshots.Load() }

// Owned returns the partitions the node holds now.
func (n *Node) Owned() map[int]uint64 { return n.owners.Owned() }

// SetAPI announces where the node's operator API answers, for the other
// nodes' view of the whole crawl (Members).
func (n *Node) SetAPI(addr string) {
	n.mu.Lock()
	n.api = addr
	n.mu.Unlock()
	n.announce(nil)
}

type announcement struct {
	API   string      `json:"api,omitempty"`
	Drain *drainState `json:"drain,omitempty"`
}

// Member is a live node of the cluster: where its API answers (if it said)
// and the partitions it holds.
type Member = live.ClusterMember

// PartitionCount is the cluster's number of partitions, P.
func (n *Node) PartitionCount() int { return n.crawl.Partitions() }

// Members lists the cluster's nodes from the lease bucket.
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	ms, err := n.owners.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		var a announcement
		_ = json.Unmarshal(m.Announce, &a) // a node that said nothing (yet) has no API
		out = append(out, Member{Node: m.Node, API: a.API, Partitions: m.Partitions})
	}
	return out, nil
}

func (n *Node) stopConsumers() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for p, tk := range n.consumers {
		tk.stop()
		delete(n.consumers, p)
	}
	for p := range n.hopSubs {
		n.stopHops(p)
	}
}
