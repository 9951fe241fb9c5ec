package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/partition"
)

// Claim lets a request to host start while the node's lease of its
// partition is valid, and end by the time that validity runs out: a node
// cut off from the cluster stops its requests before another can start.
//
// The lease must also be the one whose takeover let the partition's hosts
// go: a lease lost and taken again (by this node, after another node had
// it) leaves the old takeover's hosts unheld until the old lease's release
// is through, and a request then would follow the other node's without
// the new takeover's clocks and delay.
func (n *Node) Claim(host string) (time.Time, bool) {
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
// what was fetched since, then its URLs, and only then are its hosts
// leased, each one gap after the takeover at the earliest (the frontier's
// TakeOverPartition). The reads run on a goroutine of
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
// consumer and its hosts. Each step is
// tried again until it works, for as long as the node holds the
// partition and lives: the partition waits, held, rather than being
// crawled without its past.
func (n *Node) takeOver(ctx context.Context, p int, epoch uint64, tk *taking) {
	// The crawl must be running to take visits in (its store open, its
	// seen set warmed).
	select {
	case <-n.crawl.Ready():
	case <-n.crawl.Done():
		return
	case <-ctx.Done():
		return
	}
	// The reads, and then the consumer, end the moment the lease is lost
	// (fenced, found lost, given back), not when its release comes: the
	// owners' callbacks run one at a time, and a release before this
	// one's may wait for a request out (a worker that cannot log its
	// page's links while NATS is out of reach), for as long as the node
	// is cut off. A consumer left running would offer, once the link is
	// back, the URLs another node logged and visited meanwhile; queued
	// here after that visit, they would not count it when the node takes
	// the partition again (schedule.Planner.VisitedElsewhere), and be
	// fetched twice. Stopped at the fence, every URL queued here was
	// queued before another node could lease the partition (TTL/2 later
	// at the earliest). (Watched from here: the crawl runs, so Start has
	// set n.owners; a callback may come before it has.)
	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return
	}
	lost := n.owners.Lost(p, epoch)
	n.wg.Go(func() {
		select {
		case <-lost:
			tk.stop()
		case <-ctx.Done():
		}
	})
	n.mu.Unlock()
	// Its hosts' kept clocks, each held one gap from now: the last owner
	// may have died just after a request. Then the visits made in the
	// partition, into the crawl's own store.
	if !n.untilRead(ctx, p, "host clocks", 20*time.Second, func(actx context.Context) error {
		kept, err := n.hostClocks(actx, p)
		if err == nil {
			n.in.TakeOver(p, kept)
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
	n.wg.Go(func() { n.consume(ctx, p, tk, ps) })
	// Every host's last request, on the last owner, ended before its
	// lease came free (a handoff waits for the requests in flight; a
	// dead owner's leases expire TTL/2 after its last one), so the gap
	// from the takeover that the frontier makes each host wait (TakeOver,
	// above) keeps every gap. Under n.mu: a release holds the partition
	// after this, not before. Not its validity at this instant: a renewal
	// late under load makes a lease invalid a moment without losing it,
	// and a partition left held would never be crawled; every request
	// asks Claim anyway.
	if n.holds(p, tk) {
		tk.open = true
		n.in.HoldPartition(p, false)
		n.serveHops(p)
	}
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
		err := n.in.Adopt(batch)
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
	n.in.ReleasePartition(p) // held, nothing in flight, completions applied
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
		n.Clocked(host, c)
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
