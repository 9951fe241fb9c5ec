package crawl

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	recent "github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/store"
)

// Hosts is what the crawl knows of its hosts, as its operator asks: each
// one's queue and clock, robots.txt answer, URLs accepted and recent
// activity; and the holds an operator puts on them. Crawler.Hosts returns
// it, safe for concurrent use from New on: the operator API's api.Hosts.
type Hosts struct {
	front    *frontier.Frontier
	robots   *robotstxt.Cache
	caps     *hostmap.Map[store.HostState] // the URLs accepted per host
	activity *recent.Hosts
	delay    time.Duration // Config.Delay, the least gap
	life     *lifecycle.State
}

// Hosts returns the crawl's hosts, for its operator.
func (c *Crawler) Hosts() *Hosts {
	return &Hosts{front: c.front, robots: c.robots.Cache, caps: c.hostCap, activity: c.flog.Hosts(), delay: c.cfg.Delay, life: c.life}
}

// Host returns what the crawl knows of host (an authority, host[:port],
// as URLs are queued under).
func (h *Hosts) Host(host string) live.HostStatus {
	if n, err := policy.NormalHost(host); err == nil {
		host = n
	}
	st := live.HostStatus{Host: host, Robots: h.robots.CachedHost(host, time.Now())}
	if h.life.Now().FrontierUp {
		st.Frontier = h.front.Host(host)
	}
	st.Accepted = h.accepted(host)
	cl := st.Frontier.Clock
	st.Gap = max(h.delay, cl.CrawlDelay, cl.Backoff)
	st.Known = st.Frontier.Known || st.Robots != nil || st.Accepted > 0
	return st
}

// Hosts returns what the crawl knows of the hosts its frontier holds,
// those with the most URLs in memory first, at most limit.
func (h *Hosts) Hosts(limit int) []live.HostStatus {
	if !h.life.Now().FrontierUp {
		return nil
	}
	infos := h.front.Hosts(limit)
	out := make([]live.HostStatus, 0, len(infos))
	now := time.Now()
	for _, f := range infos {
		out = append(out, live.HostStatus{Host: f.Name, Known: true, Frontier: f, Robots: h.robots.CachedHost(f.Name, now),
			Accepted: h.accepted(f.Name), Gap: max(h.delay, f.Clock.CrawlDelay, f.Clock.Backoff)})
	}
	return out
}

func (h *Hosts) accepted(host string) int64 {
	hs, _ := h.caps.Get(host)
	return hs.Accepted
}

// Hold pauses one host (on) or resumes it: its queue and clock are kept,
// a fetch in flight finishes, and the rest of the crawl goes on. A host
// not known yet is held when its first URL comes. A crawl that is not
// continuous does not drain while a host with URLs is held.
//
// The host is named as in its URLs (policy.NormalHost: lowercase,
// punycode, no default port); it returns that name, or why host is not one.
func (h *Hosts) Hold(host string, on bool) (string, error) {
	n, err := policy.NormalHost(host)
	if err != nil {
		return "", err
	}
	h.front.Hold(n, on)
	return n, nil
}

// Activity returns what the crawl keeps of host's recent activity: its
// counts, last fetches and parks, while it is among the hosts fetched most
// recently (recent.Hosts); ok is false otherwise.
func (h *Hosts) Activity(host string) (recent.Activity, bool) {
	if n, err := policy.NormalHost(host); err == nil {
		host = n
	}
	return h.activity.Of(host)
}
