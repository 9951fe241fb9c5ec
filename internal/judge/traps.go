package judge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/sketch"
	"github.com/weft-crawler/weft/internal/store"
)

// DefaultMaxURLsPerPattern is the per-pattern cap's default: enough for a
// large archive of numbered articles, and a bound on what a calendar or a
// faceted search can cost one crawl.
const DefaultMaxURLsPerPattern = 10_000

// MaxPatternCap is the most the per-pattern cap may be: the counters are
// 16-bit and saturate at 65,535.
const MaxPatternCap = 65_000

// trapRule says whether a refusal's reason is one of the rules that bound
// a crawl trap: they are reported per host. The depth limit is not among
// them: in a broad crawl most hosts meet it, and would crowd out the traps.
func trapRule(reason string) bool {
	switch reason {
	case Pattern, Repeats, HostCap, Trap:
		return true
	}
	return false
}

// traps counts, per URL pattern, the URLs a crawl accepted, and per host
// the requests it made (pages and robots.txt), each in a count-min sketch
// of its own: a bounded memory whatever a trap generates, at the price of
// counts that may run a little high when many keys share counters (a cap
// of a few dozen is approximate in a crawl of millions) and that stop at
// 65,535.
type traps struct {
	patterns *sketch.Sketch // nil when patterns are not limited
	fetches  *sketch.Sketch
	cap      int // per pattern; 0: patterns not limited

	mu    sync.Mutex
	hosts map[string]*TrapCost // hosts a trap rule refused or held URLs of, at most maxTrapHosts
	more  int64                // further such hosts, not itemised
}

// maxPatternBytes bounds the pattern counts' memory: past 32 million
// expected URLs counts share more counters and run higher, which a cap of
// thousands still tolerates.
const maxPatternBytes = 64 << 20

// maxTrapHosts bounds the hosts whose trap refusals are itemised.
const maxTrapHosts = 10_000

// newTraps sizes the pattern counts for expectedURLs (zero: a million) at
// two bytes a URL, up to maxPatternBytes, where each row of the sketch has
// a counter for every four URLs counted: at that load a pattern's count
// runs high by a few at most, nothing beside a cap of thousands. The
// request counts get an eighth of that: hosts are fewer than URLs.
func newTraps(expectedURLs uint, patternCap int) *traps {
	if expectedURLs == 0 {
		expectedURLs = 1_000_000
	}
	n := int(min(expectedURLs, 1<<30))
	t := &traps{fetches: sketch.New(min(max(256<<10, n/4), maxPatternBytes/8)), cap: patternCap, hosts: map[string]*TrapCost{}}
	if patternCap > 0 {
		t.patterns = sketch.New(min(max(1<<20, 2*n), maxPatternBytes))
	}
	return t
}

// The trap rules' counts in the store (package sketch, encoded).
const (
	metaTrapPatterns = "trapcounts/patterns"
	metaTrapRequests = "trapcounts/requests"
)

// sketches are the counts and their keys in the store.
func (t *traps) sketches() []struct {
	key string
	s   *sketch.Sketch
} {
	return []struct {
		key string
		s   *sketch.Sketch
	}{{metaTrapPatterns, t.patterns}, {metaTrapRequests, t.fetches}}
}

// LoadCounts reads the trap rules' counts an earlier run saved. Counts
// that do not decode are dropped with a warning (they start again from
// zero): the crawl's own state is intact.
func (j *Judge) LoadCounts(db *store.DB) error {
	for _, c := range j.traps.sketches() {
		if c.s == nil {
			continue
		}
		b, ok, err := db.GetMeta(c.key)
		if err != nil {
			return fmt.Errorf("judge: read the trap rules' counts: %w", err)
		}
		if !ok {
			continue
		}
		if err := c.s.UnmarshalBinary(b); err != nil {
			j.cfg.Log.Warn("trap rules' counts of an earlier run dropped", "key", c.key, "err", err)
		}
	}
	if j.budgets == nil {
		return nil
	}
	b, ok, err := db.GetMeta(metaTrapFamilies)
	if err != nil {
		return fmt.Errorf("judge: read the trap budgets: %w", err)
	}
	if ok {
		if err := j.budgets.unmarshal(b); err != nil {
			j.cfg.Log.Warn("trap budgets of an earlier run dropped", "key", metaTrapFamilies, "err", err)
		}
	}
	b, ok, err = db.GetMeta(metaPathModifiers)
	if err != nil {
		return fmt.Errorf("judge: read the path modifiers: %w", err)
	}
	if ok {
		if err := j.budgets.mods.unmarshal(b); err != nil {
			j.cfg.Log.Warn("path modifiers of an earlier run dropped", "key", metaPathModifiers, "err", err)
		}
	}
	b, ok, err = db.GetMeta(metaModifierHosts)
	if err != nil {
		return fmt.Errorf("judge: read the hosts with path modifiers: %w", err)
	}
	if err := j.budgets.mods.unmarshalHosts(b, ok); err != nil {
		j.cfg.Log.Warn("hosts with path modifiers of an earlier run unread: every host's paths are looked at", "key", metaModifierHosts, "err", err)
	}
	return nil
}

// SaveCounts writes the trap rules' counts to the store, so that a
// resumed crawl goes on from them: a pattern's cap holds across a
// restart, and so do the budgets of the families in memory.
func (j *Judge) SaveCounts(db *store.DB) error {
	b := db.NewBatch()
	for _, c := range j.traps.sketches() {
		if c.s == nil {
			continue
		}
		v, err := c.s.MarshalBinary()
		if err != nil {
			return err
		}
		b.PutMeta(c.key, v)
	}
	if j.budgets != nil {
		b.PutMeta(metaTrapFamilies, j.budgets.marshal())
		b.PutMeta(metaPathModifiers, j.budgets.mods.marshal())
		b.PutMeta(metaModifierHosts, j.budgets.mods.marshalHosts())
	}
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("judge: save the trap rules' counts: %w", err)
	}
	return nil
}

func patternKey(u canon.URL) seen.Key { return seen.KeyOf(scope.Pattern(u)) }
func fetchKey(host string) seen.Key   { return seen.KeyOf(host) }

// full reports whether u's pattern has its cap of URLs, and returns the
// pattern's key for admitted. Workers admitting URLs of one pattern at
// once may pass the cap by a few.
func (t *traps) full(u canon.URL) (bool, seen.Key) {
	if t.patterns == nil {
		return false, seen.Key{}
	}
	k := patternKey(u)
	return t.patterns.Count(k) >= t.cap, k
}

// admitted counts one URL of key's pattern.
func (t *traps) admitted(key seen.Key) {
	if t.patterns != nil {
		t.patterns.Add(key)
	}
}

// Fetched counts one request to host (a page or robots.txt), for the
// report of what trap hosts cost.
func (j *Judge) Fetched(host string) { j.traps.fetches.Add(fetchKey(host)) }

// refused records a URL of host that a trap rule refused.
func (t *traps) refused(host, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.host(host); c != nil {
		c.Refused[reason]++
	}
}

// held records a URL of host held past its family's trap budget.
func (t *traps) held(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.host(host); c != nil {
		c.Held++
	}
}

// host returns host's cost, nil when it is past those itemised; t.mu is
// held.
func (t *traps) host(host string) *TrapCost {
	c := t.hosts[host]
	if c == nil {
		if len(t.hosts) >= maxTrapHosts {
			t.more++
			return nil
		}
		c = &TrapCost{Host: host, Refused: map[string]int64{}}
		t.hosts[host] = c
	}
	return c
}

// TrapCost is what a host that trap rules cut short cost the crawl.
type TrapCost struct {
	Host     string           `json:"host"`
	Requests int              `json:"requests"` // requests made to it, robots.txt included (estimated: at least the true count, up to 65,535)
	Refused  map[string]int64 `json:"refused"`  // its URLs refused, by trap rule
	Held     int64            `json:"held"`     // its URLs held past their family's trap budget: queued at the lowest priority, not refused
}

// RefusedTotal is the sum of Refused.
func (c TrapCost) RefusedTotal() int64 {
	var n int64
	for _, v := range c.Refused {
		n += v
	}
	return n
}

// cut is the URLs the trap rules kept from being fetched: refused or held.
func (c TrapCost) cut() int64 { return c.RefusedTotal() + c.Held }

// maxTrapReport is how many trap hosts the report itemises.
const maxTrapReport = 20

// TrapReport returns the hosts trap rules refused or held the most URLs
// of, with the requests each cost, most first; and the number of such
// hosts.
func (j *Judge) TrapReport() ([]TrapCost, int64) {
	t := j.traps
	t.mu.Lock()
	out := make([]TrapCost, 0, len(t.hosts))
	for _, c := range t.hosts {
		out = append(out, TrapCost{Host: c.Host, Refused: maps.Clone(c.Refused), Held: c.Held})
	}
	n := int64(len(t.hosts)) + t.more
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b TrapCost) int {
		if c := cmp.Compare(b.cut(), a.cut()); c != 0 {
			return c
		}
		return cmp.Compare(a.Host, b.Host)
	})
	out = out[:min(len(out), maxTrapReport)]
	for i := range out {
		out[i].Requests = t.fetches.Count(fetchKey(out[i].Host))
	}
	return out, n
}
