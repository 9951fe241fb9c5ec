package history

import (
	"container/list"
	"sync"
	"time"
)

// Fetch is one request to a host, as a host's page lists it.
type Fetch struct {
	Time       time.Time `json:"time"`
	URL        string    `json:"url"`
	Status     int       `json:"status,omitempty"` // 0: no response
	DurationMS int64     `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	Error      string    `json:"error,omitempty"`
}

// failed reports whether the fetch counts as an error: no response, or a
// 5xx or 429 answer.
func (f Fetch) failed() bool { return f.Status == 0 || f.Status >= 500 || f.Status == 429 }

// Park is one time a host was parked after failures: from At, until Until.
type Park struct {
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

// Activity is what Hosts keeps of one host since the process started (or
// since the host was last evicted): its counts, its last fetches (newest
// first) and its parks.
type Activity struct {
	Fetched   int64     `json:"fetched"` // requests made, with a response or not
	Errors    int64     `json:"errors"`  // those without a response, or answered 429 or 5xx
	LastFetch time.Time `json:"last_fetch"`
	// PerMinute is the rate of its last fetches (those Last lists), per
	// minute; zero with fewer than two.
	PerMinute float64 `json:"per_minute"`
	Last      []Fetch `json:"last"`
	Parks     []Park  `json:"parks"`
}

// HostsConfig bounds Hosts.
type HostsConfig struct {
	Hosts   int // hosts kept, the most recently fetched; zero means 1024
	Fetches int // fetches kept per host; zero means 10
	Parks   int // parks kept per host; zero means 10
}

// maxError caps the error text kept of a fetch: with URLs at most 2 KiB
// (the crawl's filter), the defaults keep at most about 25 MiB, and about
// 2 MiB for URLs of a usual length.
const maxError = 200

// Hosts keeps the recent activity of the hosts fetched most recently,
// bounded: at most HostsConfig.Hosts hosts (the least recently fetched is
// forgotten first), each with its last few fetches and parks. It is safe
// for concurrent use.
type Hosts struct {
	cfg HostsConfig

	mu    sync.Mutex
	order *list.List // of *hostEntry, most recent at the front
	by    map[string]*list.Element
}

type hostEntry struct {
	name     string
	fetched  int64
	errors   int64
	fetches  []Fetch // a ring: the newest at next-1
	next     int
	parks    []Park
	nextPark int
}

// NewHosts returns an empty tracker.
func NewHosts(cfg HostsConfig) *Hosts {
	if cfg.Hosts <= 0 {
		cfg.Hosts = 1024
	}
	if cfg.Fetches <= 0 {
		cfg.Fetches = 10
	}
	if cfg.Parks <= 0 {
		cfg.Parks = 10
	}
	return &Hosts{cfg: cfg, order: list.New(), by: map[string]*list.Element{}}
}

// entry returns host's entry, most recent now, making it (and evicting the
// least recent) if it is new.
func (h *Hosts) entry(host string) *hostEntry {
	if e, ok := h.by[host]; ok {
		h.order.MoveToFront(e)
		return e.Value.(*hostEntry)
	}
	for h.order.Len() >= h.cfg.Hosts {
		old := h.order.Back()
		h.order.Remove(old)
		delete(h.by, old.Value.(*hostEntry).name)
	}
	he := &hostEntry{name: host}
	h.by[host] = h.order.PushFront(he)
	return he
}

// Fetched records a request to host.
func (h *Hosts) Fetched(host string, f Fetch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(f.Error) > maxError {
		f.Error = f.Error[:maxError] + "…"
	}
	e := h.entry(host)
	e.fetched++
	if f.failed() {
		e.errors++
	}
	if len(e.fetches) < h.cfg.Fetches {
		e.fetches = append(e.fetches, f)
		e.next = len(e.fetches) % h.cfg.Fetches
		return
	}
	e.fetches[e.next] = f
	e.next = (e.next + 1) % h.cfg.Fetches
}

// Parked records that host was parked at at, until until.
func (h *Hosts) Parked(host string, at, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entry(host)
	p := Park{At: at, Until: until}
	if len(e.parks) < h.cfg.Parks {
		e.parks = append(e.parks, p)
		e.nextPark = len(e.parks) % h.cfg.Parks
		return
	}
	e.parks[e.nextPark] = p
	e.nextPark = (e.nextPark + 1) % h.cfg.Parks
}

// Len is the number of hosts kept.
func (h *Hosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.order.Len()
}

// Of returns host's activity; ok is false if none is kept.
func (h *Hosts) Of(host string) (a Activity, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.by[host]
	if !ok {
		return Activity{Last: []Fetch{}, Parks: []Park{}}, false
	}
	e := el.Value.(*hostEntry)
	a = Activity{Fetched: e.fetched, Errors: e.errors, Last: newestFirst(e.fetches, e.next), Parks: newestFirst(e.parks, e.nextPark)}
	if len(a.Last) > 0 {
		a.LastFetch = a.Last[0].Time
	}
	if n := len(a.Last); n >= 2 {
		if span := a.Last[0].Time.Sub(a.Last[n-1].Time); span > 0 {
			a.PerMinute = float64(n-1) / span.Minutes()
		}
	}
	return a, true
}

// newestFirst returns a ring's items, whose next slot is next, newest first.
func newestFirst[T any](items []T, next int) []T {
	out := make([]T, 0, len(items))
	for i := range items {
		out = append(out, items[(next-1-i+2*len(items))%len(items)])
	}
	return out
}
