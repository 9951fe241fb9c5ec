package cluster

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
)

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

func donePrefix(p int) string { return "weft.done." + strconv.Itoa(p) }

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

// Forward publishes a page's URLs to their partitions' logs and waits for
// every acknowledgement, before the page's batch commits; a log that does
// not answer (a leader election) is tried again for up to two minutes
// before the crawl gives up.
func (n *Node) Forward(urls []crawl.Offered) error {
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
// then those logged since and as they come, until stopped (tk's
// context, ctx, is done once the lease is lost: takeOver): one ordered
// consumer, read as a stream of messages.
func (n *Node) consume(ctx context.Context, p int, tk *taking, ps *partSnap) {
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
		if next, err = n.consumeFrom(ctx, p, next, tk, ps); ctx.Err() == nil {
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
// start of the log) until ctx is done, the consumer fails or the lease tk
// took over is lost; it returns the sequence to go on from.
func (n *Node) consumeFrom(ctx context.Context, p int, start uint64, tk *taking, ps *partSnap) (uint64, error) {
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
		if !n.holds(p, tk) {
			// The lease is lost: the URL is its next owner's to offer, not
			// this node's to queue after that owner may have visited it
			// (takeOver stops the consumer too, as the lease goes).
			tk.stop()
			return next, context.Canceled
		}
		if md, err := m.Metadata(); err == nil {
			next = md.Sequence.Stream + 1
		}
		var o crawl.Offered
		if json.Unmarshal(m.Data(), &o) == nil {
			if err := n.in.Offer([]crawl.Offered{o}); errors.Is(err, crawl.ErrNotRunning) {
				// The crawl's Run has not started yet: offered once it
				// takes work; one that has ended takes none, and this
				// reader stops with the node.
				select {
				case <-n.crawl.Ready():
					if errors.Is(n.in.Offer([]crawl.Offered{o}), crawl.ErrNotRunning) {
						<-ctx.Done()
					}
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
