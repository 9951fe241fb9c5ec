package judge

import (
	"crypto/sha1"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// memStates is a store's host state table in memory.
type memStates map[string]store.HostState

func (m memStates) Load(host string) store.HostState     { return m[host] }
func (m memStates) Save(host string, st store.HostState) { m[host] = st }

// The near-duplicate windows and the index alias states are part of the
// per-host states: with room for one host, judging pages of two hosts in
// turn evicts each at every step, and each window still fills and cuts its
// host off exactly when most of its own last pages were copies; the alias
// bits of each scheme come back from the store as they were learnt.
func TestTrapWindowsAndAliasesKeptThroughEviction(t *testing.T) {
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	states := hostmap.NewBounded[store.HostState](1, 1, memStates{})
	j := New(Config{Hosts: states, NearDupWindow: 8, Partitions: 1, Log: slog.New(slog.DiscardHandler)})
	b := db.NewBatch()
	defer b.Close()
	// a: all copies, cut at its eighth page; b: one copy in two, never.
	for i := range 8 {
		if j.copies.trappedInMemory(canon.URL{Authority: "a"}) || j.Trapped(canon.URL{Authority: "a"}) {
			t.Fatalf("a cut off after %d pages, want 8", i)
		}
		j.JudgedPage(b, "a", canon.URL{}, "", "http://a.test/first") // a copy of another page
		of := ""
		if i%2 == 0 {
			of = "http://b.test/first"
		}
		j.JudgedPage(b, "b", canon.URL{}, "", of)
	}
	if n := states.Len(); n != 1 {
		t.Fatalf("%d hosts' states in memory, bound 1", n)
	}
	if j.copies.trappedInMemory(canon.URL{Authority: "a"}) {
		t.Fatal("a is in memory; b, judged last, should be")
	}
	if !j.Trapped(canon.URL{Authority: "a"}) || j.Trapped(canon.URL{Authority: "b"}) {
		t.Fatalf("a cut off %v, b %v; want a only (its window read back from the store)", j.Trapped(canon.URL{Authority: "a"}), j.Trapped(canon.URL{Authority: "b"}))
	}
	if n, names := j.Cut(); n != 1 || names[0] != "a" {
		t.Fatalf("cut off: %d %v, want a", n, names)
	}

	x := j.aliases
	states.Update("a", func(s store.HostState) store.HostState { s.AliasSame |= 1 << 1; return s })   // http, index.htm
	states.Update("a", func(s store.HostState) store.HostState { s.AliasDiffer |= 1 << 2; return s }) // https, index.html
	states.Get("b")                                                                                   // evicts a
	if got, _, _ := x.state("http", "a"); got != (aliasState{same: 2}) || !got.holds(1) || got.holds(0) {
		t.Errorf("http://a read back as %+v, want index.htm served alike", got)
	}
	if got, _, _ := x.state("https", "a"); got != (aliasState{differ: 1}) || got.holds(0) {
		t.Errorf("https://a read back as %+v, want index.html differing", got)
	}
	if _, _, ok := x.state("ftp", "a"); ok {
		t.Error("an ftp origin has an alias state")
	}
}

// admitWorld is what a Judge needs for Admit, in memory: every host one
// scope admits, no guard, no robots.txt known yet.
type admitWorld struct {
	staged  []frontier.Item
	pending []seen.Pending
}

func (*admitWorld) Permits(string) error                    { return nil }
func (*admitWorld) Cached(string, time.Time) *robots.Policy { return nil }
func (w *admitWorld) Stage(it frontier.Item, part int, k seen.Key) error {
	w.staged = append(w.staged, it)
	w.pending = append(w.pending, seen.Pending{Partition: part, Key: k})
	return nil
}

// admitJudge is a Judge of a.test's scope over a seen set in memory, with
// what mod changes of its Config, and the world it admits into.
func admitJudge(t *testing.T, mod func(*Config)) (*Judge, *canon.Canonicalizer, *seen.Set, *admitWorld) {
	t.Helper()
	cn := canon.New(canon.Config{})
	sc, err := scope.New(scope.Config{})
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := cn.Parse("http://a.test/")
	sc.AddSeed(seed)
	set, err := seen.New(seen.Config{ExpectedURLs: 1000, Partitions: 1}, seen.NewMemoryStore(1))
	if err != nil {
		t.Fatal(err)
	}
	w := &admitWorld{}
	cfg := Config{Canon: cn, Scope: sc, Seen: set, Guard: w, Robots: w, Hosts: hostmap.New[store.HostState](1),
		ExpectedURLs: 1000, Partitions: 1, Log: slog.New(slog.DiscardHandler)}
	mod(&cfg)
	return New(cfg), cn, set, w
}

// The rules that run under the seen set's lock (the host cap, the
// pattern cap) refuse through it with their own reason, not as an error,
// and cost nothing but their count; a URL met again is seen; a refused URL
// is not marked seen, so it is refused again by its rule.
func TestAdmitRefusesThroughTheSeenSet(t *testing.T) {
	j, cn, set, w := admitJudge(t, func(c *Config) { c.MaxURLsPerHost, c.MaxURLsPerPattern = 2, 100 })
	admit := func(raw string) string {
		t.Helper()
		u, err := cn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		why, err := j.Admit(Candidate{URL: u, Depth: 1, As: AsPageLink}, w)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return why
	}
	for raw, want := range map[string]string{"http://a.test/x": "", "http://a.test/y": ""} {
		if got := admit(raw); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	if got := admit("http://a.test/x"); got != Seen {
		t.Errorf("a URL met again: %q, want %q", got, Seen)
	}
	for range 2 {
		if got := admit("http://a.test/z"); got != HostCap {
			t.Errorf("a third URL of a host capped at 2: %q, want %q", got, HostCap)
		}
	}
	if len(w.staged) != 2 {
		t.Errorf("%d URLs staged, want 2", len(w.staged))
	}
	if got := j.Rejected(); got[HostCap] != 2 || got[Seen] != 1 {
		t.Errorf("counted: %v", got)
	}
	// A link met lately, most of what a crawl judges, allocates nothing
	// once its page's batch has committed: its verdict is a value and its
	// admission comes from the pool.
	set.Settle(w.pending)
	x, _ := cn.Parse("http://a.test/x")
	if n := testing.AllocsPerRun(100, func() { j.Admit(Candidate{URL: x, Depth: 1, As: AsPageLink}, w) }); n != 0 {
		t.Errorf("judging a link met again allocates %.0f times", n)
	}
}

// ownScopes gives seed 7 a scope of its own.
type ownScopes struct{ f *scope.Filter }

func (o ownScopes) Filter(id seeds.ID) *scope.Filter {
	if id == 7 {
		return o.f
	}
	return nil
}

// TestShallowest: a page's lease takes the least depth a page link to its
// URL was met at after the URL was queued, once its batch is committed
// (the seen set's cache then holds it); a redirect's hop, a requisite and
// a lease of a seed with a scope of its own keep their depth, and a link
// found under such a seed lowers no other seed's.
func TestShallowest(t *testing.T) {
	j, cn, set, w := admitJudge(t, func(c *Config) { c.Seeds = ownScopes{c.Scope} })
	admit := func(raw string, depth int, seed uint32) string {
		t.Helper()
		u, err := cn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		why, err := j.Admit(Candidate{URL: u, Depth: depth, Seed: seed, As: AsPageLink}, w)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return why
	}
	x, y := "http://a.test/x", "http://a.test/y"
	if admit(x, 9, 0) != "" || admit(y, 9, 0) != "" {
		t.Fatal("new URLs refused")
	}
	set.Settle(w.pending) // their batch is committed
	for _, d := range []int{6, 3, 5} {
		admit(x, d, 0)
	}
	admit(y, 2, 7) // found under the seed of its own scope
	lease := func(raw string, depth int, seed uint32, hops int, requisite bool) int {
		l := frontier.Lease{Item: frontier.Item{URL: raw, Depth: depth, Seed: seed, Hops: hops, Requisite: requisite}}
		if lowered := j.Shallowest(&l); lowered != depth-l.Depth {
			t.Errorf("%s: lowered by %d, from %d to %d", raw, lowered, depth, l.Depth)
		}
		return l.Depth
	}
	for _, c := range []struct {
		name      string
		url       string
		seed      uint32
		hops      int
		requisite bool
		want      int
	}{
		{"met at 3 since", x, 0, 0, false, 3},
		{"a redirect's hop", x, 0, 1, false, 9},
		{"a requisite", x, 0, 0, true, 9},
		{"a seed of its own scope", x, 7, 0, false, 9},
		{"met only under a seed of its own scope", y, 0, 0, false, 9},
	} {
		if got := lease(c.url, 9, c.seed, c.hops, c.requisite); got != c.want {
			t.Errorf("%s: depth %d, want %d", c.name, got, c.want)
		}
	}
}

// A copy of a page under another spelling of its URL, a parameter added
// or dropped (a forum's topic with and without its forum's id), is left
// out of its host's near-duplicate window, up to maxRespelt copies of a
// page: a board whose every topic is fetched under two or three
// spellings is not cut off, but a page copied under a new value of a
// parameter in every link (a session's), or copies at other paths, are.
func TestRespellingsLeaveTheHostWindow(t *testing.T) {
	parse := urlParser(t)
	cut := func(pages func(i int) (raw, of string)) bool {
		j := windowJudge(20)
		b := new(store.Batch)
		for i := range 40 {
			raw, of := pages(i)
			u := parse(raw)
			j.JudgedPage(b, u.Authority, u, "", of)
		}
		n, _ := j.Cut() // the host, or a directory of it
		return n > 0
	}
	topic := func(i int) string { return fmt.Sprintf("http://forum.test/viewtopic.php?t=%d", i/3) }
	if cut(func(i int) (string, string) {
		switch i % 3 {
		case 1:
			return fmt.Sprintf("http://forum.test/viewtopic.php?f=2&t=%d", i/3), topic(i)
		case 2:
			return fmt.Sprintf("http://forum.test/viewtopic.php?f=2&start=0&t=%d", i/3), topic(i)
		}
		return topic(i), ""
	}) {
		t.Error("a board whose topics are each fetched under three spellings: cut off")
	}
	if !cut(func(i int) (string, string) {
		if i == 0 {
			return "http://forum.test/", ""
		}
		return fmt.Sprintf("http://forum.test/?s=%d", i), "http://forum.test/"
	}) {
		t.Error("a page copied under a new session in every link: not cut off")
	}
	if !cut(func(i int) (string, string) {
		if i == 0 {
			return "http://forum.test/a", ""
		}
		return fmt.Sprintf("http://forum.test/cal/%d", i), "http://forum.test/a"
	}) {
		t.Error("copies at other paths: not cut off")
	}
	if !cut(func(i int) (string, string) {
		if i%4 == 0 {
			return topic(i), ""
		}
		return fmt.Sprintf("http://forum.test/viewtopic.php?t=%d&hl=%d", i/4, i), fmt.Sprintf("http://forum.test/viewtopic.php?t=%d&hl=x", i/4)
	}) {
		t.Error("copies whose parameter's value changed (neither spelling within the other): not cut off")
	}
}

// allCaptured answers every URL's captures with one 200 capture of one
// payload, and notes whose captures were read.
type allCaptured struct {
	digest [sha1.Size]byte
	read   []string
}

func (c *allCaptured) CapturesNewestFirst(key string, fn func(store.CaptureRecord) bool) error {
	c.read = append(c.read, key)
	fn(store.CaptureRecord{Status: 200, Digest: c.digest})
	return nil
}

// A directory's index files are compared with it only if the crawl met
// them: the capture index is not read for a twin the seen set never
// held, unless its filters are still being rebuilt.
func TestAliasesReadTheCapturesOfURLsMetOnly(t *testing.T) {
	caps := &allCaptured{digest: [sha1.Size]byte{7}}
	j, cn, set, w := admitJudge(t, func(c *Config) { c.Captures = caps })
	parse := func(raw string) canon.URL {
		t.Helper()
		u, err := cn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	dir := parse("http://a.test/docs/")
	if err := j.LearnAlias(dir, caps.digest); err != nil {
		t.Fatal(err)
	}
	if len(caps.read) != 0 {
		t.Fatalf("captures read for twins never met: %v", caps.read)
	}
	if st, _, _ := j.aliases.state("http", "a.test"); st != (aliasState{}) {
		t.Fatalf("learnt %+v from twins never met", st)
	}

	if why, err := j.Admit(Candidate{URL: parse("http://a.test/docs/index.html"), Depth: 1, As: AsPageLink}, w); err != nil || why != "" {
		t.Fatalf("admit: %q %v", why, err)
	}
	if err := j.LearnAlias(dir, caps.digest); err != nil {
		t.Fatal(err)
	}
	if want := []string{parse("http://a.test/docs/index.html").SURT()}; !slices.Equal(caps.read, want) {
		t.Fatalf("captures read %v, want %v (the twin met)", caps.read, want)
	}
	if st, _, _ := j.aliases.state("http", "a.test"); !st.holds(0) || st.holds(1) {
		t.Fatalf("learnt %+v, want index.html served alike", st)
	}

	// While the filters are rebuilt, a "no" is not final.
	caps.read = nil
	set.StartWarming()
	if err := j.LearnAlias(parse("http://a.test/more/"), caps.digest); err != nil {
		t.Fatal(err)
	}
	if len(caps.read) != 2 {
		t.Fatalf("warming: captures read %v, want both twins", caps.read)
	}
}
