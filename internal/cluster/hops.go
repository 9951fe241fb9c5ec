package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/partition"
)

// A robots.txt redirect to a host of another partition is that
// partition's owner's to follow (crawl.Cluster.RobotsHop): the asking node
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

// RobotsHop asks the owner of targetHost's partition to follow forHost's
// robots.txt chain from target.
func (n *Node) RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (crawl.RobotsAnswer, error) {
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
			if r.Answer, err = n.in.HopFor(ctx, req.For, req.URL, req.Host, req.Hops, req.Node == n.cfg.Node); err != nil {
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
