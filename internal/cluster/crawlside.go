package cluster

import (
	"context"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
)

// crawlSide is the node as its own crawl sees it (crawl.Cluster).
type crawlSide struct{ n *Node }

var _ crawl.Cluster = crawlSide{}

// Owns is false for every host: every URL goes through its partition's
// log, the node's own ones too, for the log is what a later owner
// rebuilds the partition from.
func (crawlSide) Owns(string) bool { return false }

func (s crawlSide) Forward(urls []crawl.Offered) error { return s.n.forward(urls) }

func (s crawlSide) Claim(host string) (time.Time, bool) { return s.n.claim(host) }

func (s crawlSide) Fetched(v crawl.Visited, host string) { s.n.fetched(v, host) }

func (s crawlSide) Clocked(host string, c frontier.Clock) { s.n.clocked(host, c) }

func (s crawlSide) RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (crawl.RobotsAnswer, error) {
	return s.n.robotsHop(ctx, forHost, target, targetHost, hops)
}
