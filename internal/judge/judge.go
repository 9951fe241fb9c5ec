// Package judge decides whether a URL a crawl comes upon is queued: its
// scope and the link filters, the address guard as far as it can judge
// without DNS, robots.txt as far as it is known, the operators' policies,
// the hosts given up or cut off, the trap rules and the per-host caps,
// and last the seen set. Every refusal has a reason, counted, and the
// trap rules' refusals are reported per host.
//
// Admit is the one way in, and asks the seen set once. The rules that
// count a URL against a cap (the pattern cap, the per-host cap) and the
// host cut-offs read from the store run under the seen set's lock for the
// URL's partition, once the set has found it new (admission.Record): a
// capped URL is then neither counted nor marked seen, and two workers
// cannot both take the last place.
package judge

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Reasons a URL is not queued.
const (
	Invalid     = "invalid"            // not a URL the WHATWG parser accepts
	Scope       = "scope"              // outside the seeds' scope or an include/exclude rule
	Filter      = "filter"             // scheme, extension, length or parameter count
	Depth       = "depth"              // too many link hops from a seed
	Redirects   = "redirects"          // redirect chain longer than the cap
	Robots      = "robots"             // disallowed by the rules of the host's robots.txt
	Unreachable = "robots-unreachable" // the host's robots.txt could not be fetched: completely disallowed (RFC 9309)
	CrawlDelay  = "crawl-delay"        // the host's robots.txt asks for a Crawl-delay longer than the crawl waits
	Policy      = "policy"             // disallowed by the operator's policy for the host
	HostCap     = "host-cap"           // the host has as many URLs as the crawl accepts
	Seen        = "seen"               // accepted before
	NoFollow    = "nofollow"           // rel=nofollow link, or the page said nofollow
	// RequisiteLinks counts the links of a document fetched as a page's
	// requisite, which are not followed.
	RequisiteLinks = "requisite-links"
	GaveUp         = "gave-up"   // its host was given up after too many failures
	NearDup        = "near-dup"  // a link of a near-duplicate page, not followed
	Trap           = "trap"      // its host, or its directory, is cut off for serving mostly near-duplicates
	Forbidden      = "forbidden" // an address the SSRF guard refuses (an IP literal, or a name pinned to one)
	Forwarded      = "forwarded" // another node's host: handed to its owner, not refused
	// InertParam: a URL queued before its host's query parameter was
	// learnt inert (ObserveParams), dropped unrequested when leased; the
	// URL without it is queued instead, unless known already.
	InertParam = "inert-param"
	// OffsiteRedirect: a URL of a shape of its host whose every URL asked
	// for so far redirected out of the crawl's scope (a click tracker;
	// redirectors.go).
	OffsiteRedirect = "offsite-redirect"
	// SeedBudget: a page of a seed whose own page budget is spent
	// (seeds.Options.MaxPages): dropped unrequested.
	SeedBudget = "seed-budget"
	// RequisiteBudget: a requisite or sitemap past the crawl's budget for
	// them (crawl.Config.MaxRequisites): dropped unrequested.
	RequisiteBudget = "requisite-budget"
	// Pattern: the host has as many URLs of this URL's pattern
	// (scope.Pattern) as the crawl accepts: a calendar, a faceted search,
	// session ids in paths, an endless page number.
	Pattern = "pattern"
	// Repeats: a path segment repeats more often than the scope allows.
	Repeats = string(scope.ReasonRepeats)
	// Requeued: a URL queued again when its importance rose, leased
	// after the other copy was fetched, or a URL held past its trap
	// budget leased after it was released (state.Batch.Release): dropped
	// unrequested.
	Requeued = "requeued"
	// HeldAgain: a URL queued before a wall, or a barren parameter, was
	// learnt, leased once it was (Learnt said HeldCopies or HeldBarren):
	// queued again behind it, unrequested, for its fall to release (Hold).
	HeldAgain = "held"
	// IndexAlias: a link to a directory's index file (X/index.html) on a
	// host that serves X/ and X/index.html alike, once X/ was fetched.
	IndexAlias = "index-alias"
	// SitemapOnly: a page's link in a crawl of the seeds and what their
	// sitemaps list alone (crawl.Config.SitemapOnly): not followed.
	SitemapOnly = "sitemap-only"
)

// As is how a URL came to be judged.
type As uint8

// The ways a URL comes to be judged.
const (
	AsLink             As = iota // a link, a redirect, a seed
	AsPageLink                   // a link found on a page: the index alias rule applies
	AsResource                   // fetched for what it is (an image, a sitemap): no extension rule
	AsOffered                    // handed over by the cluster: this crawl owns its host
	AsOfferedResource            // both
	AsRequisite                  // an HTML page's requisite: may leave the scope by one hop
	AsSheetRequisite             // a style sheet's requisite: a resource within the scope
	AsOfferedRequisite           // a requisite handed over by the cluster, judged by its finder as AsRequisite
)

// Requisite reports whether a URL so found is a page's requisite.
func (as As) Requisite() bool {
	return as == AsRequisite || as == AsSheetRequisite || as == AsOfferedRequisite
}

// Resource reports whether a URL so found is fetched for what it is.
func (as As) Resource() bool {
	return as == AsResource || as == AsOfferedResource || as.Requisite()
}

// Offered reports whether another node found the URL.
func (as As) Offered() bool {
	return as == AsOffered || as == AsOfferedResource || as == AsOfferedRequisite
}

// Candidate is a URL to judge, and how it was found.
type Candidate struct {
	URL      canon.URL
	Depth    int // link hops from a seed
	Hops     int // redirect hops that led here
	Priority frontier.Priority
	Rank     uint32 // its importance (frontier.Item.Rank)
	Via      string // the page, robots.txt or redirect it was found on
	As       As
	// Key is the URL's seen-set key when the caller hashed it already (a
	// page's link, for its in-link vote); zero means it is hashed once
	// the filters pass the URL.
	Key seen.Key
	// Page is the URL of the page whose link it is, when that page
	// answered 200 with a whole body: the index alias rule reads it.
	Page string
	// Sitemap says the URL is fetched as a sitemap, not as a page: its
	// item carries it, so the page budget does not count it.
	Sitemap bool
	// Listed says a sitemap lists the URL: a page, whatever URLs of its
	// shape have done (OffsiteRedirect).
	Listed bool
	// Seed is the id of the seed it was found under (frontier.Item.Seed):
	// that seed's own scope judges it, when it has one (Config.Seeds).
	Seed uint32
	// Path is the URL's discovery path (frontier.Item.Path).
	Path string
}

// pageLink reports whether c is a link a page leads to: not a seed, a
// redirect's target (what its server insists on), a requisite, a sitemap
// or what a sitemap lists, to which what the judge learns of a host's
// links (parameters learnt inert, click trackers) does not apply.
func (c *Candidate) pageLink() bool {
	return c.Depth > 0 && c.Hops == 0 && !c.As.Resource() && !c.Sitemap && !c.Listed
}

// Item is the frontier item an admitted candidate becomes.
func (c *Candidate) Item() frontier.Item {
	return frontier.Item{URL: c.URL.String, Host: c.URL.Authority, Depth: c.Depth, Priority: c.Priority, Rank: c.Rank, Hops: c.Hops,
		Via: c.Via, Requisite: c.As.Requisite(), Sitemap: c.Sitemap, Seed: c.Seed, Path: c.Path}
}

// RobotsCache tells what is known of an origin's robots.txt
// (scheme://authority).
type RobotsCache interface {
	// Cached returns the policy the origin's URLs are judged by at now,
	// or nil when none is known yet.
	Cached(origin string, now time.Time) *robots.Policy
}

// Guard is the address guard: Permits refuses a host (an IP literal, or
// a name pinned to an address) whose address the crawl must not reach,
// as far as that is known without DNS.
type Guard interface {
	Permits(host string) error
}

// Owner says which hosts a crawl owns: a node of a cluster judges only
// its own hosts' URLs, and hands the others to their owners.
type Owner interface {
	Owns(host string) bool
}

// SeedScopes gives the scope of a seed that has one of its own.
type SeedScopes interface {
	// Filter is the scope of seed id's links, nil when the crawl's scope
	// judges them.
	Filter(id seeds.ID) *scope.Filter
}

// Config is what a Judge judges by. Canon, Scope, Seen, Guard, Robots and
// Hosts are required.
type Config struct {
	Canon    *canon.Canonicalizer
	Scope    *scope.Filter
	Seeds    SeedScopes // nil: every URL is judged by Scope
	Seen     *seen.Set
	Guard    Guard
	Robots   RobotsCache
	Policies *policy.Set         // nil: none
	Owner    Owner               // nil: every host is this crawl's
	Filters  []plugin.LinkFilter // after the scope, in order
	// Hosts are the crawl's per-host states: the URLs accepted (the host
	// cap), the near-duplicate window and cut, the index alias pairs.
	Hosts *hostmap.Map[store.HostState]
	// Captures is the capture index, which the index alias rule reads.
	Captures Captures
	// MaxURLsPerHost caps the URLs accepted per host (0: none);
	// MaxURLsPerPattern per URL pattern of a host (0: none), counted in
	// a sketch sized for ExpectedURLs. NearDupWindow is the near-duplicate
	// cut-off's window of pages (negative: no cut-off). HostCache bounds
	// the hosts given up that are remembered.
	MaxURLsPerHost    int64
	MaxURLsPerPattern int
	ExpectedURLs      uint
	NearDupWindow     int
	HostCache         int
	Partitions        int
	// TrapBudget is the URLs a family of URLs (one path's query variants,
	// one dated path shape) may queue from its own pages before its
	// pages have shown what they are worth (budget.go); past it they are
	// queued at HeldPriority. Zero: no budget. MaxFamilies bounds the
	// families kept in memory (zero: DefaultMaxFamilies).
	TrapBudget  int
	MaxFamilies int
	// NoRelease keeps a URL held past its family's budget held when the
	// budget grows (Weigh releases none): a node of a cluster that may
	// lose its hosts, where a held entry left behind would not be known
	// stale.
	NoRelease bool
	// Ends says the crawl ends: a URL held is never leased, so one queued
	// before it would have been held (a barren parameter's) is held when
	// leased (Learnt, Hold), where a crawl that goes on fetches it.
	Ends bool
	Log  *slog.Logger
}

// Judge judges URLs. It is safe for concurrent use.
type Judge struct {
	cfg     Config
	traps   *traps
	aliases *aliases
	copies  *copies
	budgets *budgets // nil: no trap budget
	// gaveUp holds the hosts given up after too many failures, as far as
	// memory keeps them: their links are refused when found. One
	// forgotten is still dropped when its URL is leased.
	gaveUp      *hostmap.Map[bool]
	params      params      // query parameters learnt inert, per host
	redirectors redirectors // URL shapes learnt to redirect out of scope

	mu       sync.Mutex
	rejected map[string]int64

	admissions sync.Pool // *admission, one per link being judged
}

// New returns a Judge.
func New(cfg Config) *Judge {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	x := &aliases{states: cfg.Hosts, captures: cfg.Captures, canon: cfg.Canon, log: cfg.Log}
	if cfg.Seen != nil {
		x.unseen = cfg.Seen
	}
	return &Judge{
		cfg:     cfg,
		traps:   newTraps(cfg.ExpectedURLs, max(cfg.MaxURLsPerPattern, 0)),
		aliases: x,
		copies: &copies{window: cfg.NearDupWindow, states: cfg.Hosts, log: cfg.Log,
			respelt: hostmap.NewBounded[uint8](cfg.Partitions, cmp.Or(cfg.MaxFamilies, DefaultMaxFamilies), nil)},
		budgets:    newBudgets(cfg.TrapBudget, cfg.MaxFamilies, cfg.Partitions, cfg.NoRelease),
		gaveUp:     hostmap.NewBounded[bool](cfg.Partitions, cfg.HostCache, nil),
		rejected:   map[string]int64{},
		admissions: sync.Pool{New: func() any { return new(admission) }},
	}
}

// Stager stages an admitted URL's record in the caller's batch, to be
// committed with the rest of what found it; the seen set holds its key as
// pending until then.
type Stager interface {
	Stage(it frontier.Item, partition int, k seen.Key) error
}

// refusal is why a rule refuses a URL ("" when none does). host is set
// when a trap rule refused it, so that the refusal counts against that
// host. It is a value: judging a link allocates nothing for its verdict.
type refusal struct {
	reason, host string
	bounded      bool // a link filter's reason: counted as one of at most maxReasons
}

// refuse is the refusal for reason; a trap rule's names the host.
func refuse(reason string, u canon.URL) refusal {
	r := refusal{reason: reason}
	if trapRule(reason) {
		r.host = u.Authority
	}
	return r
}

// errRefused is what an admission's Screen or Record returns through the
// seen set when a rule refuses the URL; the refusal itself is the
// admission's why.
var errRefused = errors.New("judge: refused")

// Admit judges c by every rule, cheapest first, and returns why it is
// not to be queued, or "" when it is: st has staged it. Forwarded means another node owns its host:
// the caller hands it over. The seen set is asked once, right after the
// scope and the filters: a URL it knows without its store (most links
// lead to pages met lately) is refused as seen before the checks that
// would refuse it anyway (only the reason counted differs). Every refusal
// is counted. An error is the store's: the crawl cannot go on.
func (j *Judge) Admit(c Candidate, st Stager) (string, error) {
	r, err := j.admit(c, st)
	switch {
	case err != nil:
		return "error", fmt.Errorf("judge: accept %s: %w", c.URL.String, err)
	case r.reason == "" || r.reason == Forwarded:
		return r.reason, nil
	}
	if r.bounded {
		j.countBounded(r.reason)
	} else {
		j.Count(r.reason, 1)
	}
	if r.host != "" {
		j.traps.refused(r.host, r.reason)
	}
	return r.reason, nil
}

// admit judges c: the refusal, Forwarded for another node's host, or
// none (staged in st). The candidate travels in an admission taken from
// the judge's pool: judging a link allocates nothing of its own.
func (j *Judge) admit(c Candidate, st Stager) (refusal, error) {
	learnt := c.pageLink() // what the judge learns of a host applies
	if learnt {
		if u, ok := j.params.strip(c.URL); ok {
			// A page link queued as the URL without its host's inert
			// parameters: the same page, once. (The crawl strips its
			// links as it resolves them; this is for the rest.)
			c.URL, c.Key = u, seen.Key{}
		}
	}
	if r := j.scope(&c); r.reason != "" {
		return r, nil
	}
	if learnt && j.redirectors.offsite(c.URL, c.Via) {
		return refusal{reason: OffsiteRedirect}, nil
	}
	if c.Key == (seen.Key{}) {
		c.Key = seen.KeyOf(c.URL.String)
	}
	a := j.admissions.Get().(*admission)
	*a = admission{j: j, c: c, stage: st}
	r, err := a.judge()
	*a = admission{} // the pool keeps no URL alive
	j.admissions.Put(a)
	return r, err
}

// scope is the first check: the seeds' scope, then the link filters.
// Seeds are in scope by definition, and a URL another node found was
// filtered there.
func (j *Judge) scope(c *Candidate) refusal {
	u := c.URL
	f := cmp.Or(j.seedScope(c.Seed), j.cfg.Scope)
	var r scope.Reason
	switch {
	case c.As == AsRequisite || c.As == AsOfferedRequisite: // one hop past the scope
		r = f.CheckRequisite(u)
	case c.As.Resource(): // fetched for what it is (an image, a sitemap): no extension rule
		r = f.CheckEmbed(u, c.Depth)
	case c.Depth > 0 || c.Hops > 0:
		r = f.Check(u, c.Depth)
	}
	if r != "" {
		return refuse(string(r), u)
	}
	if (c.Depth > 0 || c.Hops > 0) && !c.As.Offered() {
		if why := j.filter(c); why != "" {
			return refusal{reason: why, bounded: true}
		}
	}
	return refusal{}
}

// admission is a URL on its way through the seen set (seen.Admission).
// Screen runs when the set does not know the URL without its store,
// before it looks further: the rules that need no lock. Record runs under
// the set's lock for the URL's partition once the set has found it new:
// the caps count only URLs that are new, a capped URL is neither queued
// nor marked seen, two workers cannot both take a cap's last place, and a
// cut host's state is read from the store only for a URL that would be
// queued. Seeds are exempt from the pattern cap, as from the scope.
type admission struct {
	j     *Judge
	c     Candidate
	stage Stager
	cap   int64   // the URLs its host may have (0: no cap)
	why   refusal // what refused it, when Screen or Record returned errRefused
}

// judge asks the seen set, once, whether the URL is new, with the rules
// that go with it (Screen, Record); another node's host is screened only.
func (a *admission) judge() (refusal, error) {
	j, c := a.j, &a.c
	if !c.As.Offered() && !j.owns(c.URL.Authority) {
		// Another node's host: its owner's seen set judges whether the
		// URL is new (not a refusal: the caller counts what it forwards).
		if err := a.Screen(); err != nil {
			return a.verdict(err)
		}
		return refusal{reason: Forwarded}, nil
	}
	isNew, err := j.cfg.Seen.AddKey(c.URL.Authority, c.URL.String, c.Key, a)
	switch {
	case err != nil:
		return a.verdict(err)
	case !isNew:
		return refusal{reason: Seen}, nil
	}
	return refusal{}, nil
}

// Shallowest lowers the depth of l, a page's lease, to the least depth a
// link to it was met at since it was queued, if a shorter way in was
// found meanwhile (seen.Set.Met), and returns by how much: a URL keeps
// the depth of the page that found it first, which in importance order
// may be far deeper than the shortest way in, and its links would meet
// the depth limit sooner than a breadth-first crawl's. (The crawl ranks
// the page's links by the depth it had: the order is not changed.)
func (j *Judge) Shallowest(l *frontier.Lease) (lowered int) {
	if l.Hops > 0 || l.Requisite || l.Sitemap || l.RobotsFor != "" || l.Depth <= 1 || j.seedScope(l.Seed) != nil {
		return 0
	}
	if d, ok := j.cfg.Seen.Depth(seen.KeyOf(l.URL)); ok && d < l.Depth {
		lowered, l.Depth = l.Depth-d, d
	}
	return lowered
}

// seedScope is the scope and depth of the seed of id's own (seeds.Options),
// nil when the crawl's judge its links. A depth met on such a seed's way
// is not another seed's, so neither is noted nor taken (Shallowest).
func (j *Judge) seedScope(id uint32) *scope.Filter {
	if id == 0 || j.cfg.Seeds == nil {
		return nil
	}
	return j.cfg.Seeds.Filter(seeds.ID(id))
}

// LinkDepth implements seen.Linked: the depth of a page link, which the
// seen set notes of a URL it knows already (a shorter way to it, maybe:
// Shallowest), but none under a seed with a scope of its own.
func (a *admission) LinkDepth() int {
	if a.c.pageLink() && a.j.seedScope(a.c.Seed) == nil {
		return a.c.Depth
	}
	return -1
}

// refuse keeps r as the admission's verdict, and says so through the
// seen set.
func (a *admission) refuse(r refusal) error {
	a.why = r
	return errRefused
}

// verdict is the refusal err stands for, or err itself: the store's.
func (a *admission) verdict(err error) (refusal, error) {
	if errors.Is(err, errRefused) { // Record's comes wrapped by the seen set
		return a.why, nil
	}
	return refusal{}, err
}

// Screen implements seen.Admission.
func (a *admission) Screen() error {
	j, u := a.j, a.c.URL
	if j.cfg.Guard.Permits(u.Host) != nil {
		// An address the guard refuses, known without DNS: not queued at
		// all. Names are judged again at every connect.
		return a.refuse(refusal{reason: Forbidden})
	}
	if u.Path == "/robots.txt" {
		// Fetched through the robots.txt cache only: as a page it would
		// probe a host whose robots.txt failed, and fetch the file twice.
		return a.refuse(refusal{reason: Filter})
	}
	if pol := j.cfg.Robots.Cached(u.Scheme+"://"+u.Authority, time.Now()); pol != nil && !pol.Allowed(u.PathQuery()) {
		return a.refuse(refusal{reason: RobotsRefusal(pol)})
	}
	if gaveUp, _ := j.gaveUp.Peek(u.Authority); gaveUp {
		return a.refuse(refusal{reason: GaveUp})
	}
	if j.copies.trappedInMemory(u) {
		return a.refuse(refuse(Trap, u))
	}
	hp := j.cfg.Policies.For(u.Authority, u.Host)
	if !hp.Allowed(u.PathQuery()) {
		return a.refuse(refusal{reason: Policy})
	}
	a.cap = j.cfg.MaxURLsPerHost
	if hp != nil && hp.MaxURLs > 0 && (a.cap == 0 || hp.MaxURLs < a.cap) {
		a.cap = hp.MaxURLs // a policy only lowers the cap
	}
	return nil
}

// Record implements seen.Admission: the rules, then the record.
func (a *admission) Record(part int, k seen.Key) (bool, error) {
	j, c, u := a.j, &a.c, a.c.URL
	full, pk := j.traps.full(u)
	if full && c.Depth+c.Hops > 0 {
		return false, a.refuse(refuse(Pattern, u))
	}
	if j.copies.trapped(u) { // a host whose state is not in memory
		return false, a.refuse(refuse(Trap, u))
	}
	if c.As == AsPageLink && j.aliases.skip(c.Page, u) {
		return false, a.refuse(refusal{reason: IndexAlias})
	}
	if a.cap > 0 && j.cfg.Hosts.Update(u.Authority, func(s store.HostState) store.HostState { s.Accepted++; return s }).Accepted > a.cap {
		return false, a.refuse(refuse(HostCap, u))
	}
	reason, fam := j.budgets.hold(c)
	var held Held
	if reason != "" {
		// Kept, where a later run or an idle crawl may reach it, behind
		// everything else, and remembered, for its family's budget to
		// release (Weigh).
		held = Held{Item: c.Item(), Key: k}
		held.Item.Priority = ReleasedPriority
		c.Priority = HeldPriority
		j.traps.held(u.Authority)
	}
	if err := a.stage.Stage(c.Item(), part, k); err != nil {
		return false, err
	}
	if fam != "" {
		// Remembered before the batch commits: a release before then
		// comes from a later page of the family, on the same host, whose
		// lease waits for this one to complete; or from this batch itself,
		// which state.Batch.Release finds among its own items.
		j.budgets.waiting.add(fam, held)
	}
	j.traps.admitted(pk)
	return true, nil
}

// owns reports whether this crawl owns host.
func (j *Judge) owns(host string) bool { return j.cfg.Owner == nil || j.cfg.Owner.Owns(host) }

// filter asks the link filters about c; "" accepts it.
func (j *Judge) filter(c *Candidate) string {
	if len(j.cfg.Filters) == 0 {
		return ""
	}
	link := plugin.Link{URL: c.URL.String, Host: c.URL.Authority, Depth: c.Depth, From: c.Via, Kind: linkKind(c.As, c.Hops)}
	for _, f := range j.cfg.Filters {
		if why := f.Filter(link); why != "" {
			return why // counted by Admit, as every refusal is
		}
	}
	return ""
}

// linkKind names how a URL came to be judged, for a LinkFilter.
func linkKind(as As, hops int) string {
	switch {
	case as.Requisite():
		return plugin.LinkRequisite
	case as == AsResource || as == AsOfferedResource:
		return plugin.LinkResource
	case hops > 0:
		return plugin.LinkRedirect
	}
	return plugin.LinkPage
}

// RobotsRefusal is why a URL its robots.txt policy disallows is refused:
// the rules of a file read, the file unreachable (RFC 9309's complete
// disallow), or a Crawl-delay longer than the crawl waits.
func RobotsRefusal(pol *robots.Policy) string {
	if pol.DelayRefused {
		return CrawlDelay
	}
	if pol.Outcome == robots.DisallowAll {
		return Unreachable
	}
	return Robots
}

// maxReasons bounds the reasons counted apart: a link filter may name any
// reason it likes, and past this many its new ones count as Filter.
const maxReasons = 64

// Count counts n URLs refused for reason: the judge's own refusals, and
// those the crawl decides elsewhere (a page's links not followed, a
// queued URL dropped when leased).
func (j *Judge) Count(reason string, n int64) {
	j.mu.Lock()
	j.rejected[reason] += n
	j.mu.Unlock()
}

// countBounded counts a refusal whose reason a link filter gave.
func (j *Judge) countBounded(reason string) {
	j.mu.Lock()
	if _, ok := j.rejected[reason]; !ok && len(j.rejected) >= maxReasons {
		reason = Filter
	}
	j.rejected[reason]++
	j.mu.Unlock()
}

// Rejected returns the refusals counted so far, by reason.
func (j *Judge) Rejected() map[string]int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]int64, len(j.rejected))
	for k, v := range j.rejected {
		out[k] = v
	}
	return out
}

// GiveUp remembers that host was given up after too many failures: its
// links are refused from now on.
func (j *Judge) GiveUp(host string) { j.gaveUp.Update(host, func(bool) bool { return true }) }
