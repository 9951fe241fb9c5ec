package cluster

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
)

// Fetched logs a URL the crawl fetched, with its record, in its host's
// partition's log of visits, where the partition's next owner reads it.
func (n *Node) Fetched(v crawl.Visited, host string) {
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

// Clocked keeps a host's clock where its next owner finds it, should this
// node die: one a restart would not assume (a Crawl-delay, a backoff,
// failures). The worker waits for it, as for Fetched.
func (n *Node) Clocked(host string, c frontier.Clock) {
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
