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
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"weft/internal/crawl"
	"weft/internal/frontier"
	wjs "weft/internal/jetstream"
	"weft/internal/partition"
	"weft/internal/seen"
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
	// Crawl is the node's crawl; its Partitions, Owns, Forward, Skip,
	// Fetched and KeepAlive are the node's to set.
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

// Node is one running node.
type Node struct {
	cfg    Config
	js     jetstream.JetStream
	hosts  jetstream.KeyValue // per host: its last clock worth keeping (crawl.Config.Clocked)
	crawl  *crawl.Crawler
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
	if cfg.Crawl.Delay >= ttl/2 {
		// After a crash, the lease's TTL is all that parts the dead
		// node's last request to a host from the next owner's first (at
		// least TTL/2), for hosts with no clock kept (no Crawl-delay,
		// no backoff).
		return nil, fmt.Errorf("cluster: the delay %v must be under half the lease TTL %v", cfg.Crawl.Delay, ttl)
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
	// Every URL goes through its partition's log, the node's own ones
	// too: the log is what a later owner rebuilds the partition from.
	cc.Owns = func(string) bool { return false }
	cc.Forward = n.forward
	cc.SharedVisits = true
	cc.Fetched = n.fetched
	cc.Claim = n.claim
	cc.Clocked = n.clocked
	cc.RobotsHop = n.robotsHop
	if n.crawl, err = crawl.New(cc); err != nil {
		return nil, err
	}
	if got := n.crawl.Partitions(); got != cfg.Partitions {
		// A data directory made for another partition count: its hosts'
		// state sits in other partitions than the cluster's.
		n.crawl.Discard()
		return nil, fmt.Errorf("cluster: the crawl in %s has %d partitions, the cluster %d: give the node a data directory of its own", cc.DataDir, got, cfg.Partitions)
	}
	for p := range cfg.Partitions {
		n.crawl.HoldPartition(p, true)
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
type Member struct {
	Node       string
	API        string
	Partitions []int
}

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

func partOf(rawURL string, parts int) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	return partition.Of(u.Host, parts)
}

// A partition's logs: weft.links.<p>.<url key> and weft.done.<p>.<url
// key>, read whole with the filter weft.links.<p>.> (and done).
func linksPrefix(p int) string { return "weft.links." + strconv.Itoa(p) }
func donePrefix(p int) string  { return "weft.done." + strconv.Itoa(p) }

// urlSubject is rawURL's subject under prefix: its key in hex.
func urlSubject(prefix, rawURL string) string {
	k := seen.KeyOf(rawURL)
	return prefix + "." + hex.EncodeToString(k[:])
}

// hostKey is a host's key in the hosts bucket, under its partition's
// prefix so that a new owner reads its partition's hosts alone; the host
// is base64url-encoded (a KV key has no ':').
func hostKey(p int, host string) string {
	return "p." + strconv.Itoa(p) + "." + base64.RawURLEncoding.EncodeToString([]byte(host))
}

// forward publishes a page's URLs to their partitions' logs and waits for
// every acknowledgement, before the page's batch commits; a log that does
// not answer (a leader election) is tried again for up to two minutes
// before the crawl gives up.
func (n *Node) forward(urls []crawl.Offered) error {
	var err error
	for wait := 100 * time.Millisecond; wait < 2*time.Minute; wait *= 2 {
		if err = n.publishLinks(urls); err == nil {
			return nil
		}
		n.log.Warn("cluster: links not logged; trying again", "urls", len(urls), "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-n.life.Done():
			// The node stops: the page stays queued on disk, for its next
			// run, and the crawl stops as stopped, not failed.
			return fmt.Errorf("%w: %w", crawl.ErrStopping, err)
		}
	}
	return err
}

func (n *Node) publishLinks(urls []crawl.Offered) error {
	var futures []jetstream.PubAckFuture
	for _, o := range urls {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		// The first offer of a URL is the one kept (its depth, a seed's
		// scope): a later one, or a retry, finds the subject taken, which
		// is success.
		f, err := n.js.PublishAsync(urlSubject(linksPrefix(partOf(o.URL, n.cfg.Partitions)), o.URL), b,
			jetstream.WithExpectLastSequencePerSubject(0))
		if err != nil {
			return err
		}
		futures = append(futures, f)
	}
	timeout := time.After(30 * time.Second)
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			if !alreadyLogged(err) {
				return err
			}
		case <-timeout:
			return errors.New("cluster: no acknowledgement from the links stream")
		case <-n.life.Done():
			return errors.New("cluster: no acknowledgement from the links stream before the node stopped")
		}
	}
	n.activity.Add(int64(len(urls)))
	return nil
}

// alreadyLogged reports whether a publish expecting an empty subject
// failed because the subject has its message already.
func alreadyLogged(err error) bool {
	var je jetstream.JetStreamError
	if !errors.As(err, &je) || je.APIError() == nil {
		return false
	}
	code := je.APIError().ErrorCode
	return code == jetstream.JSErrCodeStreamWrongLastSequence || code == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// claim lets a request to host start while the node's lease of its
// partition is valid, and end by the time that validity runs out: a node
// cut off from the cluster stops its requests before another can start.
//
// The lease must also be the one whose takeover let the partition's hosts
// go: a lease lost and taken again (by this node, after another node had
// it) leaves the old takeover's hosts unheld until the old lease's release
// is through, and a request then would follow the other node's without
// the new takeover's clocks and delay.
func (n *Node) claim(host string) (time.Time, bool) {
	if n.owners == nil {
		return time.Time{}, false
	}
	p := partition.Of(host, n.cfg.Partitions)
	epoch, until, ok := n.owners.Valid(p)
	if !ok {
		return time.Time{}, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	tk := n.consumers[p]
	return until, tk != nil && tk.epoch == epoch && tk.open
}

// holds reports whether partition p's lease is still the one tk took
// over.
func (n *Node) holds(p int, tk *taking) bool {
	epoch, ok := n.owners.Epoch(p)
	return ok && epoch == tk.epoch
}

func (n *Node) fetched(v crawl.Visited, host string) {
	p := partition.Of(host, n.cfg.Partitions)
	b, err := json.Marshal(v)
	if err != nil {
		n.log.Error("cluster: a fetched URL not logged", "url", v.URL, "err", err)
		return
	}
	// One message per visit: a recrawl is news, a retry of the same one
	// is not (within the stream's two-minute duplicate window, which the
	// retries stay inside).
	id := v.URL + " " + strconv.FormatInt(v.Record.LastFetch.UnixNano(), 10)
	subject := urlSubject(donePrefix(p), v.URL)
	// The worker waits here, before its lease completes: a node has at
	// most one fetched URL per worker not yet in the log, and a handoff
	// (which waits for the leases out) leaves none. A leader election is
	// waited out, while the node holds the partition.
	err = n.retry(p, func(ctx context.Context) error {
		_, err := n.js.Publish(ctx, subject, b, jetstream.WithMsgID(id))
		return err
	})
	if err != nil {
		n.log.Error("cluster: a fetched URL not logged; its next owner may fetch it again", "url", v.URL, "err", err)
		return
	}
	n.activity.Add(1)
	n.mu.Lock()
	if tk := n.consumers[p]; tk != nil && tk.snap != nil {
		tk.snap.grown.Add(1)
	}
	n.mu.Unlock()
}

// retry calls fn until it succeeds, for at most 90 s, while the node has
// partition p's lease (valid, being handed over, or a moment late): once
// it is fenced or given back, what fn writes could land after the next
// owner's own writes.
func (n *Node) retry(p int, fn func(context.Context) error) error {
	deadline := time.Now().Add(90 * time.Second)
	wait := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(n.life, 10*time.Second)
		err := fn(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().Add(wait).After(deadline) || !n.owners.Has(p) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-n.life.Done():
			return err
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// clocked keeps a host's clock where its next owner finds it, should this
// node die: one a restart would not assume (a Crawl-delay, a backoff,
// failures). The worker waits for it, as for fetched.
func (n *Node) clocked(host string, c frontier.Clock) {
	p := partition.Of(host, n.cfg.Partitions)
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	err = n.retry(p, func(ctx context.Context) error {
		_, err := n.hosts.Put(ctx, hostKey(p, host), b)
		return err
	})
	n.mu.Lock()
	defer n.mu.Unlock()
	if err == nil {
		delete(n.unkept[p], host)
		return
	}
	// Tried again when the partition is handed over (release), so that a
	// graceful handoff passes it on; a crash before that loses it.
	if n.unkept[p] == nil {
		n.unkept[p] = map[string]frontier.Clock{}
	}
	n.unkept[p][host] = c
	n.log.Error("cluster: a host's clock not kept yet; tried again at the handoff", "host", host, "err", err)
}

// hostClocks reads the clocks kept of partition p's hosts, up to the
// last the bucket's leader has (replay).
func (n *Node) hostClocks(ctx context.Context, p int) (map[string]frontier.Clock, error) {
	prefix := wjs.KVSubject(HostsBucket, "p."+strconv.Itoa(p)+".")
	out := map[string]frontier.Clock{}
	err := n.replay(ctx, wjs.KVStream(HostsBucket), prefix+">", 0, func(m jetstream.Msg) bool {
		host, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(m.Subject(), prefix))
		if err != nil {
			return true // not a key of weft's
		}
		var c frontier.Clock
		switch {
		case wjs.KVDeleted(m.Headers()):
			delete(out, string(host))
		case json.Unmarshal(m.Data(), &c) == nil:
			out[string(host)] = c
		}
		return true
	})
	return out, err
}

// acquire takes a partition over: its hosts' kept clocks, its snapshot,
// what was fetched since, then its URLs, and only then, one delay after
// the takeover, are its hosts leased. The reads run on a goroutine of
// their own (takeOver): the owners' callbacks, every other handoff of
// this node, do not wait for a partition whose past is slow to read.
func (n *Node) acquire(p int, epoch uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	// Goroutines join n.wg under n.mu while Run has not ended, so that
	// none is added once Run waits for them.
	if n.ended {
		return
	}
	// ctx ends with the node's life, a release, or the lease lost.
	ctx, stop := context.WithCancel(n.life)
	tk := &taking{stop: stop, ctx: ctx, epoch: epoch, read: make(chan struct{})}
	n.consumers[p] = tk
	n.wg.Go(func() {
		defer close(tk.read)
		n.takeOver(ctx, p, epoch, tk)
	})
}

// takeOver reads partition p's past into the crawl and starts its
// consumer and, one delay after the takeover, its hosts. Each step is
// tried again until it works, for as long as the node holds the
// partition and lives: the partition waits, held, rather than being
// crawled without its past.
func (n *Node) takeOver(ctx context.Context, p int, epoch uint64, tk *taking) {
	taken := time.Now()
	// The crawl must be running to take visits in (its store open, its
	// seen set warmed).
	for !n.crawl.Running() {
		n.mu.Lock()
		ended := n.ended
		n.mu.Unlock()
		if ended {
			return
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
	// The reads end if the lease is lost meanwhile. (Watched from here:
	// the crawl runs, so Start has set n.owners; a callback may come
	// before it has.)
	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return
	}
	n.wg.Go(func() {
		for ctx.Err() == nil && n.holds(p, tk) {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			case <-tk.read:
				return
			}
		}
		tk.stop()
	})
	n.mu.Unlock()
	// Its hosts' kept clocks, each held one gap from now: the last owner
	// may have died just after a request. Then the visits made in the
	// partition, into the crawl's own store.
	if !n.untilRead(ctx, p, "host clocks", 20*time.Second, func(actx context.Context) error {
		kept, err := n.hostClocks(actx, p)
		if err == nil {
			n.crawl.TakeOver(kept)
		}
		return err
	}) {
		return // the partition is lost, or the node or its crawl stops
	}
	// Its snapshot's visits, if it has one, then those logged since.
	var ps *partSnap
	fromSnap, visits := 0, 0
	if !n.untilRead(ctx, p, "snapshot", 10*time.Minute, func(actx context.Context) (err error) {
		ps, fromSnap, err = n.loadSnapshot(actx, p)
		return err
	}) {
		return
	}
	if !n.untilRead(ctx, p, "visits", 2*time.Minute, func(actx context.Context) (err error) {
		visits, err = n.adoptVisits(actx, p, ps.ptr.DoneBelow)
		return err
	}) {
		return
	}
	ps.grown.Add(int64(visits))
	snapObject := ps.ptr.Object // for the log: ps is the snapshots' once consumed
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.consumers[p] != tk || ctx.Err() != nil {
		return // released meanwhile
	}
	tk.snap = ps
	n.wg.Go(func() { n.consume(ctx, p, ps) })
	// Every host's last request, on the last owner, ended before its
	// lease came free (a handoff waits for the requests in flight; a
	// dead owner's leases expire TTL/2 after its last one), so waiting
	// one delay from the takeover keeps every gap; a host owing more has
	// its clock kept (above).
	n.wg.Go(func() {
		select {
		case <-time.After(time.Until(taken.Add(n.cfg.Crawl.Delay))):
		case <-ctx.Done(): // released meanwhile
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		// Under n.mu: a release holds the partition after this, not
		// before. Not its validity at this instant: a renewal late under
		// load makes a lease invalid a moment without losing it, and a
		// partition left held would never be crawled; every request asks
		// Claim anyway.
		if n.consumers[p] == tk && n.holds(p, tk) {
			tk.open = true
			n.crawl.HoldPartition(p, false)
			n.serveHops(p)
		}
	})
	n.log.Info("cluster: partition taken", "partition", p, "epoch", epoch, "snapshot", snapObject, "visits_adopted", fromSnap+visits)
}

// untilRead runs one read of a takeover until it works, each attempt with
// its own deadline (a watch whose server went away may never say it is
// done), backing off through a leader election or a server lost: the
// partition waits, held. It returns false once ctx is done (the lease
// lost, the node stopping) or the crawl stops.
func (n *Node) untilRead(ctx context.Context, p int, what string, deadline time.Duration, read func(context.Context) error) bool {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, deadline)
		err := read(actx)
		cancel()
		if err == nil {
			return true
		}
		if ctx.Err() != nil || errors.Is(err, crawl.ErrNotRunning) {
			return false
		}
		if attempt%10 == 0 {
			n.log.Warn("cluster: a partition taken over cannot be read yet; it waits", "partition", p, "what", what, "err", err)
		}
		select {
		case <-time.After(min(time.Duration(attempt)*200*time.Millisecond, 2*time.Second)):
		case <-ctx.Done():
		}
	}
}

// adoptVisits reads partition p's visits from stream sequence from (0:
// the start) into the crawl's store in batches (the log keeps each URL's
// last; Adopt keeps the later of it and the store's): memory holds a
// batch, not the partition. It returns how many it read.
func (n *Node) adoptVisits(ctx context.Context, p int, from uint64) (int, error) {
	read := 0
	var batch []crawl.Visited
	flush := func() error {
		err := n.crawl.Adopt(batch)
		read += len(batch)
		batch = batch[:0]
		return err
	}
	var adoptErr error
	err := n.replay(ctx, DoneStream, donePrefix(p)+".>", from, func(m jetstream.Msg) bool {
		var v crawl.Visited
		if json.Unmarshal(m.Data(), &v) == nil && v.URL != "" {
			if batch = append(batch, v); len(batch) == 1000 {
				adoptErr = flush()
			}
		}
		return adoptErr == nil
	})
	if err == nil && adoptErr == nil {
		err = flush()
	}
	return read, errors.Join(err, adoptErr)
}

// release stops a partition: no new lease, none in flight (their visits
// and kept clocks logged), its log no longer read.
func (n *Node) release(p int) {
	n.mu.Lock()
	tk := n.consumers[p]
	if tk != nil {
		tk.stop() // a pending unhold and a snapshot being made too
		delete(n.consumers, p)
	}
	n.stopHops(p)
	n.mu.Unlock()
	if tk != nil {
		// The reads of its past end (their context is done). A read that
		// does not must not hold the lease, and every handoff after it.
		select {
		case <-tk.read:
		case <-time.After(time.Minute):
			n.log.Error("cluster: a partition given up while its past was still being read", "partition", p)
		}
	}
	n.crawl.ReleasePartition(p) // held, nothing in flight, completions applied
	n.mu.Lock()
	var ps *partSnap
	if tk != nil {
		ps = tk.snap
	}
	n.mu.Unlock()
	if ps != nil {
		// A snapshot being made ends (its context is done) before the
		// lease goes back; the node's copy goes with the partition.
		ps.mu.Lock()
		_ = os.Remove(n.basePath(p))
		ps.mu.Unlock()
	}
	n.mu.Lock()
	unkept := n.unkept[p]
	delete(n.unkept, p)
	n.mu.Unlock()
	for host, c := range unkept { // before the lease goes back
		n.clocked(host, c)
	}
	// What could not be written now (a node fenced, cut off) goes with
	// the partition: written later, it would overwrite its next owners'.
	n.mu.Lock()
	if lost := len(n.unkept[p]); lost > 0 {
		n.log.Error("cluster: host clocks not kept at a handoff; the next owner waits one delay on those hosts instead", "partition", p, "hosts", lost)
	}
	delete(n.unkept, p)
	n.mu.Unlock()
	n.log.Info("cluster: partition given up", "partition", p)
}

// A robots.txt redirect to a host of another partition is that
// partition's owner's to follow (crawl.Config.RobotsHop): the asking node
// sends a request to weft.hop.<p>, which only the node leasing p answers.
func hopSubject(p int) string { return "weft.hop." + strconv.Itoa(p) }

type hopRequest struct {
	For, URL, Host string
	Hops           int
	Node           string // who asks: a hop this node asked of itself shares its robots.txt state
}

type hopReply struct {
	Answer crawl.RobotsAnswer
	Err    string `json:",omitempty"`
}

// robotsHop asks the owner of targetHost's partition to follow forHost's
// robots.txt chain from target.
func (n *Node) robotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (crawl.RobotsAnswer, error) {
	b, err := json.Marshal(hopRequest{For: forHost, URL: target, Host: targetHost, Hops: hops, Node: n.cfg.Node})
	if err != nil {
		return crawl.RobotsAnswer{}, err
	}
	m, err := n.js.Conn().RequestWithContext(ctx, hopSubject(partition.Of(targetHost, n.cfg.Partitions)), b)
	if err != nil {
		return crawl.RobotsAnswer{}, fmt.Errorf("the owner of %s: %w", targetHost, err)
	}
	var r hopReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return crawl.RobotsAnswer{}, fmt.Errorf("the owner of %s: %w", targetHost, err)
	}
	if r.Err != "" {
		return crawl.RobotsAnswer{}, fmt.Errorf("the owner of %s: %s", targetHost, r.Err)
	}
	return r.Answer, nil
}

// serveHops answers the hops asked of partition p while the node leases
// it; n.mu is held.
func (n *Node) serveHops(p int) {
	sub, err := n.js.Conn().Subscribe(hopSubject(p), func(m *nats.Msg) {
		var req hopRequest
		if json.Unmarshal(m.Data, &req) != nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.ended {
			return
		}
		n.wg.Go(func() { // a hop waits for its host's clock: not on NATS's goroutine
			ctx, cancel := context.WithTimeout(n.life, 10*time.Minute)
			defer cancel()
			var r hopReply
			var err error
			if r.Answer, err = n.crawl.HopFor(ctx, req.For, req.URL, req.Host, req.Hops, req.Node == n.cfg.Node); err != nil {
				r.Err = err.Error()
			}
			if b, err := json.Marshal(r); err == nil {
				_ = m.Respond(b)
			}
		})
	})
	if err != nil {
		n.log.Error("cluster: robots.txt hops to this partition's hosts cannot be answered", "partition", p, "err", err)
		return
	}
	n.hopSubs[p] = sub
}

// stopHops stops answering partition p's hops; n.mu is held.
func (n *Node) stopHops(p int) {
	if sub := n.hopSubs[p]; sub != nil {
		_ = sub.Unsubscribe()
		delete(n.hopSubs, p)
	}
}

// replay reads a subject from stream sequence from (0: the start) to
// its end now, as the stream's leader has it (jetstream.LastMsg: the
// consumer may be on a follower a few writes behind, and then waits for
// it), or until fn returns false.
func (n *Node) replay(ctx context.Context, stream, subject string, from uint64, fn func(jetstream.Msg) bool) error {
	last, ok, err := wjs.LastMsg(ctx, n.js, stream, subject)
	if err != nil {
		return err
	}
	if !ok || last.Sequence < max(from, 1) {
		return nil // nothing to read: no consumer made
	}
	end := last.Sequence
	// Two tries to make the consumer again after a failure, not nats.go's
	// default of trying for ever: a takeover waiting on it would hold the
	// partition's release.
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, InactiveThreshold: 30 * time.Second, MaxResetAttempts: 2}
	if from > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := n.js.OrderedConsumer(ctx, stream, cc)
	if err != nil {
		return err
	}
	// One consumer, read as a stream of messages: an ordered consumer's
	// every Fetch would make a new one. A pull that finds no one yet (the
	// consumer just made on another server) is made again one expiry
	// later, not the default thirty seconds.
	it, err := cons.Messages(jetstream.PullMaxMessages(1000), jetstream.PullExpiry(time.Second))
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer func() {
		stop()
		it.Stop()
		n.dropConsumer(stream, cons) // snapshots read often
	}()
	for read := uint64(0); read < end; {
		m, err := it.Next(jetstream.NextMaxWait(2 * time.Second))
		if errors.Is(err, nats.ErrTimeout) {
			// Nothing for two seconds: the last message may have been
			// removed meanwhile; the leader says where the end is now.
			if last, ok, err = wjs.LastMsg(ctx, n.js, stream, subject); err != nil || !ok {
				return err
			}
			end = min(end, last.Sequence)
			continue
		}
		if err != nil {
			return errors.Join(ctx.Err(), err)
		}
		if md, err := m.Metadata(); err == nil {
			read = md.Sequence.Stream
		}
		if !fn(m) {
			return nil
		}
	}
	return nil
}

// dropConsumer deletes an ordered consumer on the servers at once, rather
// than when they find it idle (the one its last reset made, if any).
func (n *Node) dropConsumer(stream string, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = n.js.DeleteConsumer(ctx, stream, info.Name)
}

// consume offers a partition's URLs to the crawl, those of its snapshot,
// then those logged since and as they come, until stopped: one ordered
// consumer, read as a stream of messages.
func (n *Node) consume(ctx context.Context, p int, ps *partSnap) {
	next, err := n.offerSnapshot(ctx, p, ps) // the stream sequence to go on from after a failure; 0: the start
	if err != nil {
		return
	}
	n.mu.Lock()
	if tk := n.consumers[p]; tk != nil && tk.snap == ps {
		tk.reading.Store(true)
	}
	n.mu.Unlock()
	for wait := 100 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 5*time.Second) {
		if next, err = n.consumeFrom(ctx, p, next, ps); ctx.Err() == nil {
			// The partition's URLs must keep coming: a consumer lost with
			// a server is made again, from where it was.
			n.log.Warn("cluster: reading the partition's URLs failed; going on", "partition", p, "at", next, "err", err, "in", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
	}
}

// offerSnapshot offers the URLs of partition p's snapshot, if it has
// one, trying again (the file fetched again) until it works or ctx is
// done, and returns the links log's sequence the snapshot ends at.
func (n *Node) offerSnapshot(ctx context.Context, p int, ps *partSnap) (uint64, error) {
	for attempt := 1; ; attempt++ {
		ps.mu.Lock()
		var err error
		if ps.rev != 0 && ps.base == "" {
			ps.base, err = n.fetchSnapshot(ctx, p, ps.ptr)
		}
		if err == nil && ps.base != "" {
			_, err = n.applySnapshot(ctx, ps.base, false, true)
			if err != nil {
				ps.base = "" // fetched again
			}
		}
		next := ps.ptr.LinksBelow
		ps.mu.Unlock()
		if err == nil || ctx.Err() != nil || errors.Is(err, crawl.ErrNotRunning) {
			return next, err
		}
		if attempt%10 == 1 {
			n.log.Error("cluster: the URLs of a partition's snapshot not read yet; trying again", "partition", p, "err", err)
		}
		select {
		case <-time.After(min(time.Duration(attempt)*time.Second, 30*time.Second)):
		case <-ctx.Done():
			return next, ctx.Err()
		}
	}
}

// consumeFrom reads partition p's URLs from stream sequence start (0: the
// start of the log) until ctx is done or the consumer fails; it returns
// the sequence to go on from.
func (n *Node) consumeFrom(ctx context.Context, p int, start uint64, ps *partSnap) (uint64, error) {
	// Failures end the consumer after a few tries, and consume makes it
	// again from where it was, seeing ctx between tries.
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: []string{linksPrefix(p) + ".>"}, MaxResetAttempts: 5}
	if start > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := n.js.OrderedConsumer(ctx, LinksStream, cc)
	if err != nil {
		return start, err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(500))
	if err != nil {
		return start, err
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer func() {
		stop()
		it.Stop()
		n.dropConsumer(LinksStream, cons)
	}()
	next := start
	for {
		// With ctx as well as the Stop above: nats.go's reset of an
		// ordered consumer (after a missed heartbeat) may make a new
		// subscription while it is being stopped, which no Stop reaches.
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return next, err
		}
		if md, err := m.Metadata(); err == nil {
			next = md.Sequence.Stream + 1
		}
		var o crawl.Offered
		if json.Unmarshal(m.Data(), &o) == nil {
			for ctx.Err() == nil {
				err := n.crawl.Offer([]crawl.Offered{o})
				if !errors.Is(err, crawl.ErrNotRunning) {
					break
				}
				select { // the crawl's Run has not started yet
				case <-time.After(10 * time.Millisecond):
				case <-ctx.Done():
				}
			}
		}
		if ctx.Err() != nil {
			return next, ctx.Err() // not offered: not for a snapshot to cover
		}
		n.activity.Add(1)
		ps.linksNext.Store(next) // offered: a snapshot may cover it
		ps.grown.Add(1)
	}
}
