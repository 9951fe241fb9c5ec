package crawl

import (
	"context"
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/store"
)

// Cluster is the rest of a crawl spread over several nodes, as one node's
// crawl sees it: what the crawl asks of the cluster and tells it. The
// cluster calls back in through the Crawler's Offer, Adopt, TakeOver,
// HoldPartition, ReleasePartition and HopFor. Its methods are called from
// many workers at once.
type Cluster interface {
	// Owns says whether this node owns host. A URL of a host it does not
	// own is not judged new or queued here but handed to Forward, for the
	// cluster to deliver to the host's owner, whose Offer judges it:
	// seeds, links, redirects and sitemaps alike.
	Owns(host string) bool
	// Forward is called with a page's URLs of other nodes' hosts before
	// the page's batch commits, so that a crash loses none (a URL may
	// then be forwarded twice; its owner's seen set drops the second). A
	// Forward that gives up because its process is stopping returns an
	// error wrapping ErrStopping: the page is not recorded (its URL stays
	// queued on disk, for the next run) and the crawl stops leasing, as
	// stopped, not failed.
	Forward([]Offered) error
	// Claim is asked before each lease is handled: whether the node may
	// make a request to host now, and until when that request must end
	// (its partition's lease; the request is cut then; zero: no end). A
	// lease it refuses goes back unfetched.
	Claim(host string) (until time.Time, ok bool)
	// Fetched hears of every page URL whose fetch is recorded, with its
	// record, for the cluster's log.
	Fetched(v Visited, host string)
	// Clocked hears of every host clock the crawl writes to its store
	// (frontier.Durable: one a restart would not assume, such as a
	// Crawl-delay, a backoff or failures), after it is written: the
	// cluster keeps them where the host's next owner finds them.
	Clocked(host string, clock frontier.Clock)
	// RobotsHop makes a robots.txt redirect to another host that host's
	// owner's to follow (this node or another): it is called, off the
	// workers, with the scheme://host[:port] whose robots.txt it is, the
	// hop's URL and host and the hops so far, and returns the owner's
	// decision (Crawler.HopFor there). An error leaves the robots.txt
	// unreachable for now, retried as a failed fetch is.
	RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (RobotsAnswer, error)
	// Keeps reports whether this node keeps every host it owns for the
	// whole crawl. Only then is a URL whose estimate rose queued a second
	// time, at its new rank (state.Batch.Requeue): a node that took the
	// host over would not know the copy left behind stale.
	Keeps() bool
}

// RobotsAnswer is the outcome of a robots.txt chain another node
// followed for a host of this one (robotstxt.Answer).
type RobotsAnswer = robotstxt.Answer

// Visited is what a node of a cluster tells the others of a URL it fetched
// (Cluster.Fetched), and what the URL's next owner takes on (Adopt): its
// record after the fetch, with the importance its next crawl was scheduled
// with.
type Visited struct {
	URL        string
	Record     store.URLRecord
	Importance float64 `json:",omitempty"`
	// First is the capture that holds the URL's payload (see
	// schedule.Visit.First), when the visit made or referred to one.
	First *store.DigestRecord `json:",omitempty"`
}

// alone is the Cluster of a crawl that runs on one node: it owns every
// host, so it forwards nothing, claims every lease without an end, and
// keeps no log of clocks or fetches. A crawl always has a Cluster, so its
// code asks the same questions alone as on a node of many.
type alone struct{}

func (alone) Owns(string) bool                        { return true }
func (alone) Forward([]Offered) error                 { return nil }
func (alone) Claim(string) (until time.Time, ok bool) { return time.Time{}, true }
func (alone) Fetched(Visited, string)                 {}
func (alone) Clocked(string, frontier.Clock)          {}
func (alone) Keeps() bool                             { return true }
func (alone) RobotsHop(context.Context, string, string, string, int) (RobotsAnswer, error) {
	return RobotsAnswer{}, errors.New("crawl: a robots.txt hop asked of a crawl on one node")
}
