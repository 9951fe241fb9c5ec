// Package cluster runs one node of a crawl spread over several machines
// on NATS JetStream: the node owns a share of the partitions (package
// jetstream's leases), fetches only their hosts, sends every URL it finds
// to the log of its host's partition, and takes the URLs of the
// partitions it owns from there.
//
// A partition's state that outlives its node is two subjects: every URL
// found for its hosts (weft.links.<p>) and every URL fetched
// (weft.done.<p>). A node that takes a partition over installs the host
// clocks the last owner left (a graceful handoff), reads what was done,
// and replays the URLs: its crawl's seen set keeps each once, and what
// another node fetched is not fetched again. After a crash, at most the
// requests the dead node had in flight are made again.
package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"weft/internal/crawl"
	"weft/internal/frontier"
	wjs "weft/internal/jetstream"
	"weft/internal/partition"
)

// Names of the streams and buckets a cluster uses.
const (
	LinksStream  = "WEFT_LINKS"
	DoneStream   = "WEFT_DONE"
	ClocksBucket = "WEFT_CLOCKS"
	HostsBucket  = "WEFT_HOSTS"
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
	Crawl  crawl.Config
	Logger *slog.Logger
}

// Node is one running node.
type Node struct {
	cfg    Config
	js     jetstream.JetStream
	clocks jetstream.KeyValue // per partition: the clocks its last owner handed over
	hosts  jetstream.KeyValue // per host: its last clock worth keeping (crawl.Config.Clocked)
	crawl  *crawl.Crawler
	owners *wjs.Owners
	log    *slog.Logger

	mu        sync.Mutex
	done      map[int]map[string]crawl.Visited // per owned partition: URLs fetched by any node, their latest visit
	consumers map[int]context.CancelFunc
	ended     bool // Run has returned: no partition is taken any more
	stopped   bool // Stop or Kill was called
	wg        sync.WaitGroup

	life    context.Context // ends with Kill or Run: retries stop waiting
	endLife context.CancelFunc
}

// Start makes the streams if needed, opens the crawl and joins the
// cluster. Run the crawl with Run.
func Start(ctx context.Context, js jetstream.JetStream, cfg Config) (*Node, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	n := &Node{cfg: cfg, js: js, log: cfg.Logger, done: map[int]map[string]crawl.Visited{}, consumers: map[int]context.CancelFunc{}}
	n.life, n.endLife = context.WithCancel(context.Background())
	for name, subj := range map[string]string{LinksStream: "weft.links.>", DoneStream: "weft.done.>"} {
		if _, err := js.Stream(ctx, name); errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj}, Storage: jetstream.FileStorage,
				Replicas: cfg.Replicas, Duplicates: 2 * time.Minute})
			if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				return nil, fmt.Errorf("cluster: stream %s: %w", name, err)
			}
		} else if err != nil {
			return nil, fmt.Errorf("cluster: stream %s: %w", name, err)
		}
	}
	var err error
	if n.clocks, err = openBucket(ctx, js, jetstream.KeyValueConfig{Bucket: ClocksBucket, Replicas: cfg.Replicas, TTL: time.Hour}); err != nil {
		return nil, err
	}
	if n.hosts, err = openBucket(ctx, js, jetstream.KeyValueConfig{Bucket: HostsBucket, Replicas: cfg.Replicas}); err != nil {
		return nil, err
	}

	cc := cfg.Crawl
	cc.Partitions = cfg.Partitions
	cc.KeepAlive = true
	// Every URL goes through its partition's log, the node's own ones
	// too: the log is what a later owner rebuilds the partition from.
	cc.Owns = func(string) bool { return false }
	cc.Forward = n.forward
	cc.Skip = n.skip
	cc.Fetched = n.fetched
	cc.Claim = n.claim
	cc.Clocked = n.clocked
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
	if ttl := n.owners.TTL(); cc.Delay >= ttl/2 {
		// After a crash, the lease's TTL is all that parts the dead
		// node's last request to a host from the next owner's first (at
		// least TTL/2), for hosts with no clock kept (no Crawl-delay,
		// no backoff).
		n.owners.Kill()
		n.crawl.Discard()
		return nil, fmt.Errorf("cluster: the delay %v must be under half the lease TTL %v (the crawl's leases bucket has it)", cc.Delay, ttl)
	}
	return n, nil
}

// openBucket opens a KV bucket, made with cfg if it does not exist yet.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) { // another node made it first
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// Run crawls until ctx is done; Stop the node first to hand its
// partitions over. A crawl that ends otherwise (an error) kills the
// node's ownership, so that its leases run out and others take over.
func (n *Node) Run(ctx context.Context) (crawl.Summary, error) {
	sum, err := n.crawl.Run(ctx)
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
	n.owners.Kill()
	n.endLife()
	n.stopConsumers()
}

// Crawler is the node's crawl, for the operator API.
func (n *Node) Crawler() *crawl.Crawler { return n.crawl }

// Name is the node's name in the cluster.
func (n *Node) Name() string { return n.cfg.Node }

// Handoffs counts the partitions the node has taken or given up.
func (n *Node) Handoffs() int { return n.owners.Handoffs() }

// Owned returns the partitions the node holds now.
func (n *Node) Owned() map[int]uint64 { return n.owners.Owned() }

// SetAPI announces where the node's operator API answers, for the other
// nodes' view of the whole crawl (Members).
func (n *Node) SetAPI(addr string) {
	b, _ := json.Marshal(announcement{API: addr})
	n.owners.Announce(b)
}

type announcement struct {
	API string `json:"api,omitempty"`
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
	for p, cancel := range n.consumers {
		cancel()
		delete(n.consumers, p)
	}
}

func partOf(rawURL string, parts int) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	return partition.Of(u.Host, parts)
}

func linksSubject(p int) string { return "weft.links." + strconv.Itoa(p) }
func doneSubject(p int) string  { return "weft.done." + strconv.Itoa(p) }
func clockKey(p int) string     { return "p." + strconv.Itoa(p) }

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
			return err
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
		f, err := n.js.PublishAsync(linksSubject(partOf(o.URL, n.cfg.Partitions)), b, jetstream.WithMsgID(o.URL))
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
			return err
		case <-timeout:
			return errors.New("cluster: no acknowledgement from the links stream")
		}
	}
	return nil
}

// claim lets a request to host start while the node's lease of its
// partition is valid, and end by the time that validity runs out: a node
// cut off from the cluster stops its requests before another can start.
func (n *Node) claim(host string) (time.Time, bool) {
	if n.owners == nil {
		return time.Time{}, false
	}
	_, until, ok := n.owners.Valid(partition.Of(host, n.cfg.Partitions))
	return until, ok
}

// skip says whether a URL was fetched by a node and is not due again: a
// crawl that ends fetches a URL once; a continuous one (weft serve) when
// the visit's next crawl has come, whichever node made the visit.
func (n *Node) skip(rawURL string) (crawl.Visited, bool) {
	p := partOf(rawURL, n.cfg.Partitions)
	n.mu.Lock()
	v, ok := n.done[p][rawURL]
	n.mu.Unlock()
	return v, ok && (v.Record.NextCrawl.IsZero() || v.Record.NextCrawl.After(time.Now()))
}

func (n *Node) fetched(v crawl.Visited, host string) {
	p := partition.Of(host, n.cfg.Partitions)
	n.mu.Lock()
	if n.done[p] != nil {
		n.done[p][v.URL] = v
	}
	n.mu.Unlock()
	b, err := json.Marshal(v)
	if err != nil {
		n.log.Error("cluster: a fetched URL not logged", "url", v.URL, "err", err)
		return
	}
	// One message per visit: a recrawl is news, a retry of the same one
	// is not.
	id := v.URL + " " + strconv.FormatInt(v.Record.LastFetch.UnixNano(), 10)
	// The worker waits here, before its lease completes: a node has at
	// most one fetched URL per worker not yet in the log, and a handoff
	// (which waits for the leases out) leaves none. A leader election
	// is waited out; a message sent twice is one (its id).
	for wait := 100 * time.Millisecond; wait < 2*time.Minute; wait *= 2 {
		ctx, cancel := context.WithTimeout(n.life, 10*time.Second)
		_, err = n.js.Publish(ctx, doneSubject(p), b, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			return
		}
		select {
		case <-time.After(wait):
		case <-n.life.Done():
			wait = 2 * time.Minute
		}
	}
	n.log.Error("cluster: a fetched URL not logged; its next owner may fetch it again", "url", v.URL, "err", err)
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
	for wait := 100 * time.Millisecond; wait < time.Minute; wait *= 2 {
		ctx, cancel := context.WithTimeout(n.life, 10*time.Second)
		_, err = n.hosts.Put(ctx, hostKey(p, host), b)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-time.After(wait):
		case <-n.life.Done():
			wait = time.Minute
		}
	}
	n.log.Error("cluster: a host's clock not kept; a node taking it over after a crash will not know it", "host", host, "err", err)
}

// hostClocks reads the clocks kept of partition p's hosts.
func (n *Node) hostClocks(ctx context.Context, p int) (map[string]frontier.Clock, error) {
	w, err := n.hosts.Watch(ctx, "p."+strconv.Itoa(p)+".>", jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	out := map[string]frontier.Clock{}
	for {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e == nil { // all there was
			return out, nil
		}
		_, enc, _ := strings.Cut(strings.TrimPrefix(e.Key(), "p."), ".")
		host, err := base64.RawURLEncoding.DecodeString(enc)
		var c frontier.Clock
		if err == nil && json.Unmarshal(e.Value(), &c) == nil {
			out[string(host)] = c
		}
	}
}

// acquire takes a partition over: the clocks its last owner left, what was
// fetched, then its URLs from the start of its log, and only then are its
// hosts leased.
func (n *Node) acquire(p int, epoch uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Its hosts' kept clocks, each held one gap from now: the last owner
	// may have died just after a request. Then the clocks it handed over,
	// if it did (a graceful handoff), which say exactly when.
	for attempt := 1; ; attempt++ {
		kept, err := n.hostClocks(ctx, p)
		if err == nil {
			n.crawl.TakeOver(kept)
			break
		}
		if attempt == 5 || ctx.Err() != nil {
			n.log.Error("cluster: the partition's host clocks could not be read; hosts with a Crawl-delay or backoff over half the lease TTL may be asked too soon", "partition", p, "err", err)
			break
		}
		select {
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if e, err := n.clocks.Get(ctx, clockKey(p)); err == nil {
		var clocks map[string]frontier.Clock
		if json.Unmarshal(e.Value(), &clocks) == nil {
			n.crawl.InstallClocks(clocks)
		}
	}
	var done map[string]crawl.Visited
	for attempt := 1; ; attempt++ {
		done = map[string]crawl.Visited{}
		err := n.replay(ctx, DoneStream, doneSubject(p), func(m jetstream.Msg) {
			var v crawl.Visited
			if json.Unmarshal(m.Data(), &v) == nil && v.URL != "" {
				done[v.URL] = v // in log order: the latest visit wins
			}
		})
		if err == nil {
			break
		}
		if attempt == 5 || ctx.Err() != nil {
			// Crawled without it, the partition's pages done elsewhere
			// would be fetched again: better than not at all.
			n.log.Error("cluster: what was fetched in the partition could not be read; pages may be fetched again", "partition", p, "err", err)
			break
		}
		select {
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	fetchedBefore := len(done) // read before the map is shared
	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return
	}
	n.done[p] = done
	cctx, stop := context.WithCancel(context.Background())
	n.consumers[p] = stop
	n.mu.Unlock()
	n.wg.Go(func() { n.consume(cctx, p) })
	n.crawl.HoldPartition(p, false)
	n.log.Info("cluster: partition taken", "partition", p, "epoch", epoch, "fetched_before", fetchedBefore)
}

// release stops a partition: no new lease, none in flight, its clocks left
// for the next owner, its log no longer read.
func (n *Node) release(p int) {
	clocks := n.crawl.ReleasePartition(p) // held, nothing in flight, completions applied
	n.mu.Lock()
	if stop := n.consumers[p]; stop != nil {
		stop()
		delete(n.consumers, p)
	}
	delete(n.done, p)
	n.mu.Unlock()
	if len(clocks) > 0 {
		if b, err := json.Marshal(clocks); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = n.clocks.Put(ctx, clockKey(p), b)
			cancel()
		}
	}
	n.log.Info("cluster: partition given up", "partition", p)
}

// replay reads a subject from its start to its end now.
func (n *Node) replay(ctx context.Context, stream, subject string, fn func(jetstream.Msg)) error {
	cons, err := n.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	for {
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			return err
		}
		got := 0
		for m := range batch.Messages() {
			fn(m)
			got++
		}
		if got == 0 {
			return batch.Error()
		}
	}
}

// consume offers a partition's URLs to the crawl, from the start of its
// log and then as they come, until stopped: one ordered consumer, read as
// a stream of messages.
func (n *Node) consume(ctx context.Context, p int) {
	cons, err := n.js.OrderedConsumer(ctx, LinksStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{linksSubject(p)}})
	if err != nil {
		n.log.Error("cluster: read the partition's URLs", "partition", p, "err", err)
		return
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(500))
	if err != nil {
		n.log.Error("cluster: read the partition's URLs", "partition", p, "err", err)
		return
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			return // stopped
		}
		var o crawl.Offered
		if json.Unmarshal(m.Data(), &o) != nil {
			continue
		}
		if _, done := n.skip(o.URL); done && n.cfg.Crawl.Recrawl == nil {
			// Fetched, and a crawl that ends fetches it no more. A
			// continuous crawl queues it all the same: its lease takes
			// the visit over (crawl.Config.Skip), and with it the URL's
			// next crawl.
			continue
		}
		for ctx.Err() == nil {
			err := n.crawl.Offer([]crawl.Offered{o})
			if !errors.Is(err, crawl.ErrNotRunning) {
				break
			}
			select { // the crawl's Run has not started yet
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	}
}
