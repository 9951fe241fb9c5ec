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
//     node leaves or dies. A watch on the bucket hears a join, a leave
//     and a lease handed over as they happen, so that shares move at once
//     rather than at the next round, and a node taking partitions stops at
//     its share as soon as another has joined.
//
// Why leases in a KV bucket rather than pinned consumers: a lease's
// revision is a fencing token weft can hand to the crawl state it writes,
// the bucket is one place an operator (and the API) can read who owns what,
// and the handoff order (stop, then release) is the node's to choose.

// Defaults of OwnersConfig.
const (
	DefaultOwnersBucket = "WEFT_OWNERS"
	// DefaultLeaseTTL leaves the fence (TTL/2) longer than a JetStream
	// leader election after a server dies (several seconds), so that the
	// loss of one NATS server moves no partition.
	DefaultLeaseTTL = 30 * time.Second
)

// OwnersConfig configures a node's share of the partitions.
type OwnersConfig struct {
	// Node is this node's name, unique in the cluster.
	Node string
	// Partitions is P, fixed for the crawl.
	Partitions int
	// Bucket is the KV bucket of leases; "" means DefaultOwnersBucket. It
	// is created if missing; an existing bucket keeps its settings, its
	// TTL included, which then stands for TTL here.
	Bucket string
	// TTL is a lease's life without renewal; zero means DefaultLeaseTTL.
	// Leases are renewed every TTL/6 and are valid until TTL/2 after the
	// last renewal acknowledged.
	TTL time.Duration
	// Replicas of the bucket when this node creates it; zero means 1.
	Replicas int
	// OnAcquire is called when the node has taken partition p at epoch.
	// OnRelease is called when it must stop (lost, fenced, handed over or
	// stopped): it should start no request on the partition's hosts and
	// return once those in flight are over; a lease handed over is given
	// back after it returns. Both are called from one goroutine, in order,
	// never from the loop that renews leases.
	OnAcquire func(p int, epoch uint64)
	OnRelease func(p int)
	Logger    *slog.Logger
}

// Owners runs one node's leases.
type Owners struct {
	cfg   OwnersConfig
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	ttl   time.Duration
	fence time.Duration
	tick  time.Duration

	mu       sync.Mutex
	announce []byte // the value of the node's key: what others read of it
	held     map[int]*lease
	handoffs int
	stopping bool // Stop has begun: take nothing more, hand nothing over
	killed   bool // Kill: no lease is valid again

	// seen is when a node's announcement was last heard by the watch
	// (watch): a node that has just joined counts toward the shares before
	// a listing shows it.
	seen map[string]time.Time

	events    chan ownerEvent // to the callback goroutine
	kick      chan struct{}   // the watch heard a join, a leave or a partition come free: balance now
	stop      chan struct{}
	done      chan struct{} // the renew loop has ended
	fenceDone chan struct{} // the fence loop has ended
	watchDone chan struct{}
	cbDone    chan struct{} // the callback goroutine has ended
	stopOnce  sync.Once
	haltOnce  sync.Once
}

type lease struct {
	epoch      uint64        // revision at which it was taken
	rev        uint64        // revision last written
	validUntil time.Time     // send time of the last acknowledged renewal + fence
	releasing  bool          // being handed over: renewed, but not valid
	lost       chan struct{} // closed once it is no longer this node's (drop)
}

// drop removes partition p's lease, which this node no longer holds, and
// closes its lost channel (Lost); o.mu is held.
func (o *Owners) drop(p int) {
	if l := o.held[p]; l != nil {
		delete(o.held, p)
		o.handoffs++
		close(l.lost)
	}
}

type ownerEvent struct {
	p        int
	epoch    uint64
	acquire  bool
	giveBack bool // after OnRelease, delete the lease so another may take it
}

// StartOwners opens (or creates) the bucket, announces the node and starts
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
	kv, err := OpenKV(ctx, js, cfg.Logger, jetstream.KeyValueConfig{Bucket: cfg.Bucket, TTL: cfg.TTL, Replicas: cfg.Replicas, History: 1})
	if err != nil {
		return nil, err
	}
	var st jetstream.KeyValueStatus
	if err := Await(ctx, cfg.Logger, "lease bucket "+cfg.Bucket, func(ctx context.Context) (err error) {
		st, err = kv.Status(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	ttl := st.TTL()
	if ttl <= 0 {
		return nil, fmt.Errorf("jetstream: lease bucket %s has no TTL: a dead node's leases would never expire", cfg.Bucket)
	}
	o := &Owners{cfg: cfg, js: js, kv: kv, ttl: ttl, fence: ttl / 2, tick: ttl / 6, held: map[int]*lease{}, seen: map[string]time.Time{},
		events: make(chan ownerEvent, 4*cfg.Partitions+16), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		watchDone: make(chan struct{}), cbDone: make(chan struct{}), fenceDone: make(chan struct{})}
	go o.callbacks()
	go o.watch()
	go o.run()
	go o.fences()
	return o, nil
}

// TTL is the lease lifetime in force: the bucket's.
func (o *Owners) TTL() time.Duration { return o.ttl }

// Valid reports whether this node may start a request on partition p now,
// with the lease's epoch and the time its requests must end by.
func (o *Owners) Valid(p int) (epoch uint64, until time.Time, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.held[p]
	if l == nil || l.releasing || !time.Now().Before(l.validUntil) {
		return 0, time.Time{}, false
	}
	return l.epoch, l.validUntil, true
}

// Holds reports whether this node still holds partition p: its lease is
// valid, or being handed over and not yet past its validity. Writes about
// the partition's hosts may go on while it does; after, the next owner's
// may have begun.
func (o *Owners) Holds(p int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.held[p]
	return l != nil && time.Now().Before(l.validUntil)
}

// Has reports whether partition p's lease is this node's, valid or not
// at this instant (a renewal late under load leaves it invalid a moment
// without losing it): it is false once the lease is fenced, lost, or
// given back.
func (o *Owners) Has(p int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held[p] != nil
}

// Lost returns a channel closed as soon as this node no longer holds the
// lease of partition p taken at epoch: fenced, found lost, or given back.
// It is closed at that moment, before OnRelease is called (the callbacks
// run one at a time, and one may wait long behind another); a lease not
// held at epoch gives a channel closed already.
func (o *Owners) Lost(p int, epoch uint64) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if l := o.held[p]; l != nil && l.epoch == epoch {
		return l.lost
	}
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Epoch returns the epoch of partition p's lease if it is this node's,
// valid or not at this instant (as Has): a lease lost and taken again is
// a new epoch, whose takeover is not the old one's.
func (o *Owners) Epoch(p int) (uint64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if l := o.held[p]; l != nil {
		return l.epoch, true
	}
	return 0, false
}

// Owned returns the partitions this node holds validly now, with their
// epochs.
func (o *Owners) Owned() map[int]uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	out := make(map[int]uint64, len(o.held))
	for p, l := range o.held {
		if !l.releasing && now.Before(l.validUntil) {
			out[p] = l.epoch
		}
	}
	return out
}

// Announce sets what the node's key says of it from its next renewal on
// (by default its name): for example where its API answers. Members
// returns it.
func (o *Owners) Announce(v []byte) {
	o.mu.Lock()
	o.announce = slices.Clone(v)
	o.mu.Unlock()
}

// AnnounceNow is Announce, written at once rather than at the next
// round, so that the others read it now; a node stopping or stopped
// writes nothing.
func (o *Owners) AnnounceNow(ctx context.Context, v []byte) error {
	o.mu.Lock()
	o.announce = slices.Clone(v)
	stopping := o.stopping
	o.mu.Unlock()
	if stopping {
		return nil
	}
	_, err := o.kv.Put(ctx, nodeKey(o.cfg.Node), v)
	return err
}

// Member is a live node of the cluster as the lease bucket shows it.
type Member struct {
	Node       string
	Announce   []byte // what the node announced (Announce), or its name
	Partitions []int  // the leases held in its name, in order
}

// Members reads the bucket: the live nodes, what each announced and the
// partitions each holds. A lease whose node's announcement has expired
// (it died) is listed under its name all the same, until it expires too.
func (o *Owners) Members(ctx context.Context) ([]Member, error) {
	w, err := o.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	by := map[string]*Member{}
	member := func(name string) *Member {
		if by[name] == nil {
			by[name] = &Member{Node: name}
		}
		return by[name]
	}
	for {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e == nil { // the values there were when the watch began are all in
			break
		}
		if name, ok := strings.CutPrefix(e.Key(), "node."); ok {
			member(name).Announce = e.Value()
		} else if v, ok := strings.CutPrefix(e.Key(), "p."); ok {
			if p, err := strconv.Atoi(v); err == nil {
				m := member(string(e.Value()))
				m.Partitions = append(m.Partitions, p)
			}
		}
	}
	out := make([]Member, 0, len(by))
	for _, m := range by {
		slices.Sort(m.Partitions)
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Node, b.Node) })
	return out, nil
}

// Handoffs counts the partitions this node has taken or given up.
func (o *Owners) Handoffs() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handoffs
}

// Stop gives every partition up (OnRelease, then the lease) and the node's
// announcement, so that the others take them at once: a graceful leave.
// Later calls, and calls after Kill, do nothing.
func (o *Owners) Stop(ctx context.Context) {
	first := false
	o.stopOnce.Do(func() { first = true })
	if !first {
		return
	}
	// Every lease stops being valid at once, and stays renewed while the
	// partitions are released one by one; only then do the loops end and
	// the leases go back.
	o.mu.Lock()
	o.stopping = true
	parts := slices.Sorted(maps.Keys(o.held))
	for _, l := range o.held {
		l.releasing = true
	}
	o.mu.Unlock()
	for _, p := range parts {
		o.cfg.OnRelease(p)
	}
	o.haltOnce.Do(o.halt)
	for _, p := range parts {
		o.giveBack(ctx, p)
	}
	_ = o.kv.Delete(ctx, nodeKey(o.cfg.Node))
}

// Kill stops the node without giving anything up, as a crash would: its
// leases stay until their TTL, and Valid is false at once.
// A kill during a Stop still ends the renewals at once: what Stop was
// handing over runs out instead.
func (o *Owners) Kill() {
	o.stopOnce.Do(func() {}) // a Stop after it does nothing
	o.mu.Lock()
	o.killed, o.stopping = true, true
	for _, l := range o.held {
		l.validUntil = time.Time{}
	}
	o.mu.Unlock()
	o.haltOnce.Do(o.halt)
}

// halt ends both goroutines; callbacks queued are still delivered.
func (o *Owners) halt() {
	close(o.stop)
	<-o.done
	<-o.fenceDone
	<-o.watchDone
	close(o.events)
	<-o.cbDone
}

func (o *Owners) run() {
	defer close(o.done)
	t := time.NewTicker(o.tick)
	defer t.Stop()
	o.round()
	for {
		select {
		case <-t.C:
			o.round()
		case <-o.kick:
			o.balance()
		case <-o.stop:
			return
		}
	}
}

// watch hears the bucket's changes as they happen, so that shares move
// without waiting for a round (TTL/6): a node announced for the first
// time (a join), a node's key deleted (a leave), a lease deleted (a
// partition handed over). Renewals are heard too, and ignored.
func (o *Owners) watch() {
	defer close(o.watchDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := o.kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
	if err != nil {
		// The rounds still balance, a tick later.
		o.cfg.Logger.Warn("partition leases not watched; shares move at each round", "err", err)
		return
	}
	defer w.Stop()
	for {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-o.stop:
			return
		}
		if e == nil {
			continue
		}
		name, isNode := strings.CutPrefix(e.Key(), "node.")
		put := e.Operation() == jetstream.KeyValuePut
		o.mu.Lock()
		_, known := o.seen[name]
		switch {
		case isNode && put:
			o.seen[name] = time.Now()
		case isNode:
			delete(o.seen, name)
		}
		o.mu.Unlock()
		if isNode && (!put || !known) || strings.HasPrefix(e.Key(), "p.") && !put {
			select {
			case o.kick <- struct{}{}:
			default:
			}
		}
	}
}

// call runs one KV call with its own deadline.
func (o *Owners) call(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.tick)
	defer cancel()
	return fn(ctx)
}

// round renews every lease, fences those whose validity ran out, and
// moves the node toward its share.
func (o *Owners) round() {
	o.mu.Lock()
	parts := slices.Sorted(maps.Keys(o.held))
	o.mu.Unlock()
	// Several at once: one after the other, a node of many partitions on
	// a slow cluster would take longer than the fence to renew them all.
	var wg sync.WaitGroup
	sem := make(chan struct{}, renewAtOnce)
	for _, p := range parts {
		select {
		case <-o.stop: // a halt does not wait for every renewal left
		case sem <- struct{}{}:
			wg.Go(func() {
				defer func() { <-sem }()
				o.renew(p)
			})
			continue
		}
		break
	}
	wg.Wait()
	select {
	case <-o.stop:
		return
	default:
	}
	o.fenceExpired(time.Now())
	_ = o.call(func(ctx context.Context) error {
		o.mu.Lock()
		v := o.announce
		o.mu.Unlock()
		if v == nil {
			v = []byte(o.cfg.Node)
		}
		_, err := o.kv.Put(ctx, nodeKey(o.cfg.Node), v)
		return err
	})

	o.balance()
}

// renewAtOnce bounds the renewals of a round in flight at once.
const renewAtOnce = 16

// balance moves the node toward its share: it hands its extra partitions
// over, or takes free ones.
func (o *Owners) balance() {
	o.mu.Lock()
	stopping := o.stopping
	o.mu.Unlock()
	if stopping {
		return
	}
	nodes, taken, err := o.listing()
	if err != nil {
		return // cannot see the cluster: keep what is held, fenced by time
	}
	share := o.share(nodes)
	o.mu.Lock()
	if o.stopping {
		o.mu.Unlock()
		return
	}
	var mine []int
	for p, l := range o.held {
		if !l.releasing {
			mine = append(mine, p)
		}
	}
	slices.Sort(mine)
	for len(mine) > share {
		p := mine[len(mine)-1] // a node joined: hand the extra ones over
		mine = mine[:len(mine)-1]
		o.held[p].releasing = true
		o.emit(ownerEvent{p: p, giveBack: true})
	}
	o.mu.Unlock()
	if len(mine) < share {
		o.acquire(nodes, taken)
	}
}

// share is this node's share among the nodes listed and those the watch
// heard announce themselves within a TTL (joined since the listing).
func (o *Owners) share(listed []string) int {
	nodes := slices.Clone(listed)
	o.mu.Lock()
	for name, at := range o.seen {
		if time.Since(at) < o.ttl && !slices.Contains(nodes, name) {
			nodes = append(nodes, name)
		}
	}
	o.mu.Unlock()
	return shareOf(o.cfg.Node, nodes, o.cfg.Partitions)
}

// mine counts the leases this node holds and is not handing over; o.mu
// is held.
func (o *Owners) mine() int {
	n := 0
	for _, l := range o.held {
		if !l.releasing {
			n++
		}
	}
	return n
}

// emit queues a callback; o.mu is held.
func (o *Owners) emit(e ownerEvent) {
	select {
	case o.events <- e:
	default:
		// The queue holds four events per partition; a partition has at
		// most an acquire and a release outstanding.
		o.cfg.Logger.Error("partition callback queue full", "partition", e.p)
	}
}

// fences gives up the leases whose validity runs out, several times a
// round, on a goroutine of its own: a round waits for its renewals, its
// announcement and the listing of the bucket, which a cut link can hold
// for a long time, and the crawl must hear (OnRelease) that a lease ran
// out before another node can take the partition over (TTL - FenceAfter
// later). A renewal still in flight for a lease given up is ignored
// when it comes back (renew checks the lease is still held).
func (o *Owners) fences() {
	defer close(o.fenceDone)
	t := time.NewTicker(max(o.tick/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case now := <-t.C:
			o.fenceExpired(now)
		}
	}
}

// fenceExpired gives up the leases whose validity ran out by now.
func (o *Owners) fenceExpired(now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p, l := range o.held {
		if !l.releasing && !now.Before(l.validUntil) {
			o.drop(p)
			o.cfg.Logger.Warn("partition lease not renewed in time; fenced", "partition", p)
			o.emit(ownerEvent{p: p})
		}
	}
}

// callbacks delivers OnAcquire and OnRelease in order, and gives a lease
// handed over back once its OnRelease has returned.
func (o *Owners) callbacks() {
	defer close(o.cbDone)
	for e := range o.events {
		switch {
		case e.acquire:
			o.cfg.OnAcquire(e.p, e.epoch)
		default:
			o.cfg.OnRelease(e.p)
			if e.giveBack {
				ctx, cancel := context.WithTimeout(context.Background(), o.tick)
				o.giveBack(ctx, e.p)
				cancel()
			}
		}
	}
}

// giveBack drops a lease this node holds and deletes its key at the
// revision last written, so that another node may take it at once.
func (o *Owners) giveBack(ctx context.Context, p int) {
	o.mu.Lock()
	l := o.held[p]
	o.drop(p)
	o.mu.Unlock()
	if l == nil {
		return
	}
	if err := o.kv.Delete(ctx, partKey(p), jetstream.LastRevision(l.rev)); err != nil {
		o.cfg.Logger.Info("partition lease not given back; it expires", "partition", p, "err", err)
	}
}

// renew writes the lease again at the revision this node last wrote. A
// conflict may be this node's own renewal whose answer was lost: the key
// is read, and kept if it still names this node. Otherwise the lease is
// lost.
func (o *Owners) renew(p int) {
	o.mu.Lock()
	l := o.held[p]
	var rev uint64
	if l != nil {
		rev = l.rev
	}
	o.mu.Unlock()
	if l == nil {
		return
	}
	sent := time.Now()
	var newRev uint64
	err := o.call(func(ctx context.Context) (err error) {
		newRev, err = o.kv.Update(ctx, partKey(p), []byte(o.cfg.Node), rev)
		return err
	})
	if err == nil {
		o.mu.Lock()
		if l == o.held[p] && !o.killed {
			l.rev, l.validUntil = newRev, sent.Add(o.fence)
		}
		o.mu.Unlock()
		return
	}
	if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return // unreachable: validity runs out by itself
	}
	// Read from the bucket's leader (LastMsg): a replica behind it may
	// not have the renewal whose answer was lost, and the lease would be
	// given up while still the node's.
	var last StoredMsg
	var found bool
	gerr := o.call(func(ctx context.Context) (err error) {
		last, found, err = LastMsg(ctx, o.js, KVStream(o.cfg.Bucket), KVSubject(o.cfg.Bucket, partKey(p)))
		return err
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	if l != o.held[p] {
		return
	}
	if gerr != nil {
		return // cannot tell: validity runs out by itself
	}
	if found && !KVDeleted(last.Header) && string(last.Data) == o.cfg.Node && last.Sequence > rev {
		l.rev = last.Sequence // ours; its validity stays as it was
		return
	}
	o.cfg.Logger.Warn("partition lease lost", "partition", p, "err", err)
	o.drop(p)
	o.emit(ownerEvent{p: p})
}

// acquire takes partitions the listing found free, up to its share,
// looking from a place of its own so that nodes do not all race for
// partition 0. The share is looked at again before each one: a node that
// joins meanwhile (heard by the watch) lowers it at once, so that nodes
// started together do not see one of them take everything first.
func (o *Owners) acquire(nodes []string, taken map[int]bool) {
	h := fnv.New32a()
	h.Write([]byte(o.cfg.Node))
	start := int(h.Sum32() % uint32(o.cfg.Partitions))
	for i := 0; i < o.cfg.Partitions; i++ {
		p := (start + i) % o.cfg.Partitions
		share := o.share(nodes)
		o.mu.Lock()
		stopping, enough := o.stopping, o.mine() >= share
		o.mu.Unlock()
		if enough {
			return
		}
		if taken[p] || stopping {
			continue
		}
		sent := time.Now()
		var rev uint64
		err := o.call(func(ctx context.Context) (err error) {
			rev, err = o.kv.Create(ctx, partKey(p), []byte(o.cfg.Node))
			return err
		})
		if err != nil {
			continue // another node was quicker, or the bucket cannot be reached
		}
		o.mu.Lock()
		if o.stopping { // Stop began meanwhile: give it straight back
			o.mu.Unlock()
			_ = o.call(func(ctx context.Context) error { return o.kv.Delete(ctx, partKey(p), jetstream.LastRevision(rev)) })
			continue
		}
		o.held[p] = &lease{epoch: rev, rev: rev, validUntil: sent.Add(o.fence), lost: make(chan struct{})}
		o.handoffs++
		o.emit(ownerEvent{p: p, epoch: rev, acquire: true})
		o.mu.Unlock()
	}
}

// listing reads the live nodes and the partitions held by anyone.
func (o *Owners) listing() (nodes []string, taken map[int]bool, err error) {
	taken = map[int]bool{}
	err = o.call(func(ctx context.Context) error {
		keys, err := o.kv.ListKeys(ctx, jetstream.MetaOnly())
		if err != nil {
			return err
		}
		defer keys.Stop()
		for k := range keys.Keys() {
			if name, ok := strings.CutPrefix(k, "node."); ok {
				nodes = append(nodes, name)
			} else if v, ok := strings.CutPrefix(k, "p."); ok {
				if p, err := strconv.Atoi(v); err == nil {
					taken[p] = true
				}
			}
		}
		return nil
	})
	return nodes, taken, err
}

// shareOf is node's share of parts among the live nodes (node counted):
// floor(parts/N), plus one for the first parts mod N nodes in name order.
func shareOf(node string, nodes []string, parts int) int {
	if !slices.Contains(nodes, node) {
		nodes = append(slices.Clone(nodes), node)
	}
	slices.Sort(nodes)
	i := slices.Index(nodes, node)
	share := parts / len(nodes)
	if i < parts%len(nodes) {
		share++
	}
	return share
}

func partKey(p int) string       { return "p." + strconv.Itoa(p) }
func nodeKey(node string) string { return "node." + node }
