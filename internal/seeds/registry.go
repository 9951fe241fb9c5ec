package seeds

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/scope"
)

// State is where a seed stands.
type State string

// The states of a seed, by this rule, first match wins:
//
//   - limit: its page budget is spent (pages fetched under it reached
//     Options.MaxPages);
//   - failing: nothing under it got a response yet some fetch failed (its
//     robots.txt unreachable, its address refused, every fetch an error),
//     or at least MinFailing fetches failed and they are more than half of
//     its fetches;
//   - running: the crawl runs;
//   - done: the crawl has ended (a seed that got nothing at all, not even
//     a failure, is failing then).
const (
	Running State = "running"
	Done    State = "done"
	Limit   State = "limit"
	Failing State = "failing"
)

// MinFailing is the fewest failed fetches that make a seed failing when
// some of its fetches succeed.
const MinFailing = 5

// Status is one seed's state and counts.
type Status struct {
	URL   string  `json:"url"`
	ID    ID      `json:"id"`
	State State   `json:"state"`
	Opts  Options `json:"options"`
	// Pages are the pages fetched under the seed (a response of any
	// status); Bytes their bodies; Errors the fetches that got no
	// response or a 5xx; Dropped the pages past its budget, unrequested.
	Pages   int64 `json:"pages"`
	Bytes   int64 `json:"bytes"`
	Errors  int64 `json:"errors"`
	Dropped int64 `json:"dropped"`
}

// Totals sums the counts and states of every seed.
type Totals struct {
	Seeds       int   `json:"seeds"`
	WithOptions int   `json:"with_options"` // seeds with limits of their own
	Running     int   `json:"running"`
	Done        int   `json:"done"`
	Limit       int   `json:"limit"`
	Failing     int   `json:"failing"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	Errors      int64 `json:"errors"`
	Dropped     int64 `json:"dropped"`
}

// entry is one seed. Its counts are atomics read without the registry's
// lock; mu orders the commits that write them to the store.
type entry struct {
	url    string
	id     ID
	opts   Options
	filter *scope.Filter // nil: the crawl's scope

	mu      sync.Mutex
	started atomic.Int64 // pages reserved against the budget
	pages   atomic.Int64
	bytes   atomic.Int64
	errors  atomic.Int64
	dropped atomic.Int64
}

// Registry is a crawl's seeds. It is safe for concurrent use.
type Registry struct {
	crawl scope.Config

	mu    sync.RWMutex
	byID  map[ID]*entry
	byURL map[string]*entry
	order []*entry // as registered, for the listing
}

// NewRegistry returns an empty registry; crawl is the crawl's scope
// configuration, which a seed's own scope starts from.
func NewRegistry(crawl scope.Config) *Registry {
	return &Registry{crawl: crawl, byID: map[ID]*entry{}, byURL: map[string]*entry{}}
}

// Add registers the seed u with its options and returns its id. A seed
// registered before keeps its id and counts, and takes opts when they are
// not zero. An error is an invalid option.
func (r *Registry) Add(u canon.URL, opts Options) (ID, error) {
	if err := opts.Validate(); err != nil {
		return 0, fmt.Errorf("%w (seed %s)", err, u.String)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byURL[u.String]; ok {
		if !opts.IsZero() {
			if err := r.setOptions(e, u, opts); err != nil {
				return 0, err
			}
		}
		return e.id, nil
	}
	id := IDOf(u.String)
	for r.byID[id] != nil || id == 0 {
		id++
	}
	e := &entry{url: u.String, id: id}
	if err := r.setOptions(e, u, opts); err != nil {
		return 0, err
	}
	r.byID[id], r.byURL[u.String] = e, e
	r.order = append(r.order, e)
	return id, nil
}

func (r *Registry) setOptions(e *entry, u canon.URL, opts Options) error {
	e.opts, e.filter = opts, nil
	if !opts.OwnScope() {
		return nil
	}
	f, err := scope.New(opts.ScopeConfig(r.crawl))
	if err != nil {
		return fmt.Errorf("seeds: %s: %w", u.String, err)
	}
	f.AddSeed(u)
	e.filter = f
	return nil
}

func (r *Registry) get(id ID) *entry {
	if id == 0 {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byID[id]
}

// Lookup returns the id of the seed with this canonical URL.
func (r *Registry) Lookup(url string) (ID, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.byURL[url]; ok {
		return e.id, true
	}
	return 0, false
}

// Filter is the scope the links found under seed id are judged by, nil
// when it is the crawl's.
func (r *Registry) Filter(id ID) *scope.Filter {
	if e := r.get(id); e != nil {
		return e.filter
	}
	return nil
}

// Widen adds u (where the seed redirected) to seed id's own scope. It
// reports whether the seed has a scope of its own.
func (r *Registry) Widen(id ID, u canon.URL) bool {
	if f := r.Filter(id); f != nil {
		f.AddSeed(u)
		return true
	}
	return false
}

// Reserve counts one page about to be fetched under seed id against its
// budget, and reports false when it is past the budget: the page is not
// to be fetched (Dropped counts it). A seed without a budget, or id 0,
// always has room.
func (r *Registry) Reserve(id ID) bool {
	e := r.get(id)
	if e == nil || e.opts.MaxPages == 0 {
		return true
	}
	if e.started.Add(1) > e.opts.MaxPages {
		e.started.Add(-1)
		e.dropped.Add(1)
		return false
	}
	return true
}

// Release gives back a page Reserve counted that was not fetched after
// all (its lease retried).
func (r *Registry) Release(id ID) {
	if e := r.get(id); e != nil && e.opts.MaxPages != 0 {
		e.started.Add(-1)
	}
}

// MetaWriter is where Stage writes a seed's counts: a store batch
// (store.Batch), committed with the page.
type MetaWriter interface {
	PutMeta(name string, v []byte)
}

// metaPrefix names a seed's record among the store's meta values.
const metaPrefix = "seed/"

// recordVersion is the layout of a seed's stored record: version, the
// counts as uvarints (pages, bytes, errors, dropped), then the URL and
// the options as JSON, each length-prefixed.
const recordVersion = 1

// Count is what one lease adds to its seed.
type Count struct {
	Page   bool  // a page fetched (a response)
	Bytes  int64 // its body
	Failed bool  // no response, or a 5xx
}

// Stage writes seed id's counts with c added into w, the batch that
// records the lease, and returns the function to call once the batch is
// committed (or failed to): the counts in memory move only then. Calls
// for one seed are ordered from Stage to done, so the record the store
// keeps is always the latest. With id 0 (or unknown) it does nothing.
func (r *Registry) Stage(w MetaWriter, id ID, c Count) (done func(committed bool)) {
	e := r.get(id)
	if e == nil || (!c.Page && !c.Failed) {
		return func(bool) {}
	}
	e.mu.Lock()
	var pages, errs int64
	if c.Page {
		pages = 1
	}
	if c.Failed {
		errs = 1
	}
	w.PutMeta(metaPrefix+strconv.FormatUint(uint64(id), 16), e.record(pages, c.Bytes, errs))
	return func(committed bool) {
		if committed {
			e.pages.Add(pages)
			e.bytes.Add(c.Bytes)
			e.errors.Add(errs)
		}
		e.mu.Unlock()
	}
}

func (e *entry) record(pages, bytes, errs int64) []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, uint64(e.pages.Load()+pages))
	b = binary.AppendUvarint(b, uint64(e.bytes.Load()+bytes))
	b = binary.AppendUvarint(b, uint64(e.errors.Load()+errs))
	b = binary.AppendUvarint(b, uint64(e.dropped.Load()))
	b = binary.AppendUvarint(b, uint64(len(e.url)))
	b = append(b, e.url...)
	opts, _ := json.Marshal(e.opts) // plain fields: cannot fail
	b = binary.AppendUvarint(b, uint64(len(opts)))
	return append(b, opts...)
}

// MetaPrefix is the prefix of the store's meta names Restore reads.
const MetaPrefix = metaPrefix

// Restore registers a seed from its stored record (the name after
// MetaPrefix and the value of a meta entry), with the id and counts it had: called
// before the seeds of a resumed crawl are added again, it keeps their
// ids, budgets spent and options given through the API.
func (r *Registry) Restore(canonicalize func(string) (canon.URL, error), name string, v []byte) error {
	idv, err := strconv.ParseUint(name, 16, 32)
	if err != nil {
		return fmt.Errorf("seeds: stored record %q: bad id", name)
	}
	bad := func(what string) error { return fmt.Errorf("seeds: stored record %q: bad %s", name, what) }
	if len(v) == 0 || v[0] != recordVersion {
		return bad("version")
	}
	v = v[1:]
	var n [4]int64
	for i := range n {
		x, k := binary.Uvarint(v)
		if k <= 0 {
			return bad("counts")
		}
		n[i], v = int64(x), v[k:]
	}
	str := func() ([]byte, error) {
		l, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < l {
			return nil, errors.New("short")
		}
		s := v[k : k+int(l)]
		v = v[k+int(l):]
		return s, nil
	}
	url, err := str()
	if err != nil {
		return bad("url")
	}
	raw, err := str()
	if err != nil {
		return bad("options")
	}
	var opts Options
	if err := json.Unmarshal(raw, &opts); err != nil {
		return bad("options")
	}
	u, err := canonicalize(string(url))
	if err != nil {
		return bad("url")
	}
	e := &entry{url: u.String, id: ID(idv)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID[e.id] != nil || r.byURL[e.url] != nil {
		return nil
	}
	if err := r.setOptions(e, u, opts); err != nil {
		return err
	}
	e.pages.Store(n[0])
	e.bytes.Store(n[1])
	e.errors.Store(n[2])
	e.dropped.Store(n[3])
	e.started.Store(n[0])
	r.byID[e.id], r.byURL[e.url] = e, e
	r.order = append(r.order, e)
	return nil
}

func (e *entry) status(ended bool) Status {
	s := Status{URL: e.url, ID: e.id, Opts: e.opts, Pages: e.pages.Load(), Bytes: e.bytes.Load(),
		Errors: e.errors.Load(), Dropped: e.dropped.Load()}
	switch {
	case e.opts.MaxPages > 0 && s.Pages >= e.opts.MaxPages:
		s.State = Limit
	case s.Pages == 0 && s.Errors > 0,
		s.Errors >= MinFailing && 2*s.Errors > s.Pages+s.Errors,
		ended && s.Pages == 0:
		s.State = Failing
	case ended:
		s.State = Done
	default:
		s.State = Running
	}
	return s
}

// Len is the number of seeds.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order)
}

// List returns the status of at most limit seeds from offset, in the
// order they were registered; ended says the crawl is over.
func (r *Registry) List(offset, limit int, ended bool) []Status {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if offset < 0 || offset >= len(r.order) || limit <= 0 {
		return nil
	}
	es := r.order[offset:min(len(r.order), offset+limit)]
	out := make([]Status, len(es))
	for i, e := range es {
		out[i] = e.status(ended)
	}
	return out
}

// Get returns the status of seed id.
func (r *Registry) Get(id ID, ended bool) (Status, bool) {
	if e := r.get(id); e != nil {
		return e.status(ended), true
	}
	return Status{}, false
}

// Totals sums every seed's counts and states.
func (r *Registry) Totals(ended bool) Totals {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t := Totals{Seeds: len(r.order)}
	for _, e := range r.order {
		s := e.status(ended)
		t.Pages += s.Pages
		t.Bytes += s.Bytes
		t.Errors += s.Errors
		t.Dropped += s.Dropped
		if !e.opts.IsZero() {
			t.WithOptions++
		}
		switch s.State {
		case Running:
			t.Running++
		case Done:
			t.Done++
		case Limit:
			t.Limit++
		case Failing:
			t.Failing++
		}
	}
	return t
}

// Record writes seed id's record as it stands into w, so that a restart
// knows the seed, its id and its options before any page of it is
// counted.
func (r *Registry) Record(w MetaWriter, id ID) {
	if e := r.get(id); e != nil {
		e.mu.Lock()
		w.PutMeta(metaPrefix+strconv.FormatUint(uint64(id), 16), e.record(0, 0, 0))
		e.mu.Unlock()
	}
}

// MetaScanner reads the store's meta values under a prefix (store.DB).
type MetaScanner interface {
	MetaPrefix(prefix string, fn func(name string, value []byte) bool) error
}

// Open restores the seeds an earlier run stored in db, then adds the
// seeds of this run: urls parsed, given as the configuration names them
// (the keys of opts, which must each be a seed). It returns the seeds'
// ids, in order.
func (r *Registry) Open(db MetaScanner, parse func(string) (canon.URL, error), urls []canon.URL, given []string, opts map[string]Options) ([]ID, error) {
	var rerr error
	err := db.MetaPrefix(metaPrefix, func(name string, v []byte) bool {
		rerr = r.Restore(parse, name, v)
		return rerr == nil
	})
	if err = errors.Join(err, rerr); err != nil {
		return nil, fmt.Errorf("seeds: read the stored seeds: %w", err)
	}
	for s := range opts {
		if !slices.Contains(given, s) {
			return nil, fmt.Errorf("seeds: options for %q, which is not a seed", s)
		}
	}
	ids := make([]ID, len(urls))
	for i, u := range urls {
		if ids[i], err = r.Add(u, opts[given[i]]); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
