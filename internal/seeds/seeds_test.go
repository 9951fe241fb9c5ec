package seeds

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/scope"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		line, url string
		opts      Options
		err       string
	}{
		{line: "https://a.example/", url: "https://a.example/"},
		{line: "https://a.example/ scope=HOST depth=3 max-pages=500", url: "https://a.example/", opts: Options{Scope: scope.Host, MaxDepth: 3, MaxPages: 500}},
		{line: "https://a.example/\tdepth=-1 pages=0 include=/docs/ include=/api/ exclude=\\.pdf$", url: "https://a.example/",
			opts: Options{MaxDepth: -1, Include: []string{"/docs/", "/api/"}, Exclude: []string{`\.pdf$`}}},
		{line: "https://a.example/ max-depth=2", url: "https://a.example/", opts: Options{MaxDepth: 2}},
		{line: "https://a.example/ scope=site", err: "seeds: field scope=site: want domain, host, prefix or any"},
		{line: "https://a.example/ depth=", err: `seeds: field "depth=": want key=value`},
		{line: "https://a.example/ depth=1.5", err: "seeds: field depth=1.5: not a whole number"},
		{line: "https://a.example/ max-pages=-3", err: "seeds: field max-pages=-3: want a whole number of pages, 0 or more"},
		{line: "https://a.example/ budget=3", err: `seeds: field "budget=3": unknown key "budget"`},
		{line: "https://a.example/ exclude=[", err: `seeds: scope: exclude[0] "["`},
		{line: "   ", err: "seeds: empty line"},
	} {
		url, opts, err := ParseLine(c.line)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || url != c.url || !reflect.DeepEqual(opts, c.opts) {
			t.Errorf("%q: %q %+v %v; want %q %+v", c.line, url, opts, err, c.url, c.opts)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add("https://a.example/ scope=host depth=3 max-pages=500 include=a exclude=b")
	f.Add("x depth=99999999999999999999")
	f.Fuzz(func(t *testing.T, line string) {
		url, opts, err := ParseLine(line)
		if err == nil && (url == "" || opts.Validate() != nil) {
			t.Errorf("%q: accepted as %q %+v", line, url, opts)
		}
	})
}

func mustURL(t *testing.T, s string) canon.URL {
	t.Helper()
	u, err := canon.New(canon.Config{}).Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// metaMap is a store batch's meta values.
type metaMap map[string][]byte

func (m metaMap) PutMeta(name string, v []byte) { m[name] = v }

// TestRegistry: a seed keeps its id when added again; a collision moves
// the second seed on; a seed with its own scope judges by it; the budget
// is reserved and given back; the counts staged, committed and restored
// from their record come back whole, with the options, the id and the
// budget spent.
func TestRegistry(t *testing.T) {
	r := NewRegistry(scope.Config{})
	a, b := mustURL(t, "http://a.test/docs/"), mustURL(t, "http://b.test/")
	ida, err := r.Add(a, Options{Scope: scope.Prefix, MaxDepth: 1, MaxPages: 2})
	if err != nil || ida != IDOf(a.String) {
		t.Fatalf("id %d, %v; want %d", ida, err, IDOf(a.String))
	}
	if again, _ := r.Add(a, Options{}); again != ida {
		t.Errorf("added again: id %d, want %d", again, ida)
	}
	// A collision: b.test's hash taken by another seed moves it on.
	r2 := NewRegistry(scope.Config{})
	r2.byID[IDOf(b.String)] = &entry{url: "http://other.test/"}
	if idb, _ := r2.Add(b, Options{}); idb != IDOf(b.String)+1 {
		t.Errorf("a colliding seed got %d, want %d", idb, IDOf(b.String)+1)
	}
	idb, _ := r.Add(b, Options{})
	f := r.Filter(ida)
	if f == nil || r.Filter(idb) != nil || r.Filter(0) != nil {
		t.Fatalf("filters %v %v: want one for the seed with a scope of its own only", f, r.Filter(idb))
	}
	if f.Check(mustURL(t, "http://a.test/docs/x"), 1) != "" || f.Check(mustURL(t, "http://a.test/blog/"), 1) != scope.ReasonScope ||
		f.Check(mustURL(t, "http://a.test/docs/x"), 2) != scope.ReasonDepth {
		t.Error("the seed's own scope does not judge by its prefix and depth")
	}
	if !r.Reserve(ida) || !r.Reserve(ida) || r.Reserve(ida) {
		t.Error("a budget of 2 lets other than 2 pages through")
	}
	r.Release(ida)
	if !r.Reserve(ida) {
		t.Error("a page given back is not free again")
	}
	if !r.Reserve(idb) || !r.Reserve(0) {
		t.Error("a seed without a budget, or none, has no room")
	}

	m := metaMap{}
	done := r.Stage(m, ida, Count{Page: true, Bytes: 100})
	done(true)
	r.Stage(m, ida, Count{Page: true, Bytes: 50, Failed: true})(false) // not committed: not counted
	r.Stage(m, ida, Count{Page: true, Bytes: 10})(true)
	if s, _ := r.Get(ida, false); s.Pages != 2 || s.Bytes != 110 || s.Errors != 0 || s.Dropped != 1 || s.State != Limit {
		t.Errorf("status %+v, want 2 pages, 110 bytes, 1 dropped, at its limit", s)
	}
	r.Record(m, idb)
	restored := NewRegistry(scope.Config{})
	parse := canon.New(canon.Config{}).Parse
	for name, v := range m {
		if err := restored.Restore(parse, strings.TrimPrefix(name, MetaPrefix), v); err != nil {
			t.Fatal(err)
		}
	}
	if s, ok := restored.Get(ida, false); !ok || s.Pages != 2 || s.Bytes != 110 || s.URL != a.String || !reflect.DeepEqual(s.Opts, Options{Scope: scope.Prefix, MaxDepth: 1, MaxPages: 2}) {
		t.Errorf("restored %+v", s)
	}
	if restored.Reserve(ida) {
		t.Error("a restored seed with its budget spent lets a page through")
	}
	if restored.Filter(ida) == nil {
		t.Error("a restored seed lost its own scope")
	}
	if id, _ := restored.Add(b, Options{}); id != idb {
		t.Errorf("a seed added after the restore got id %d, want its stored %d", id, idb)
	}
	if err := restored.Restore(parse, "zz", nil); err == nil {
		t.Error("a bad record is restored")
	}
}

// TestStates: the rule that says where a seed stands.
func TestStates(t *testing.T) {
	for _, c := range []struct {
		pages, errs, budget int64
		ended               bool
		want                State
	}{
		{0, 0, 0, false, Running},
		{3, 1, 0, false, Running},
		{3, 1, 0, true, Done},
		{0, 0, 0, true, Failing},  // nothing at all
		{0, 1, 0, false, Failing}, // robots.txt unreachable, say
		{4, 5, 0, false, Failing}, // most fetches fail
		{6, 5, 0, false, Running}, // fewer than half
		{2, 4, 0, false, Running}, // too few to say
		{5, 5, 5, false, Limit},   // the budget first
		{4, 0, 5, true, Done},     // under it
	} {
		e := &entry{opts: Options{MaxPages: c.budget}}
		e.pages.Store(c.pages)
		e.errors.Store(c.errs)
		if got := e.status(c.ended).State; got != c.want {
			t.Errorf("%+v: %s, want %s", c, got, c.want)
		}
	}
}

// TestStageOrdersCommits: concurrent pages of one seed leave the count
// of every one of them in the last record written.
func TestStageOrdersCommits(t *testing.T) {
	r := NewRegistry(scope.Config{})
	id, _ := r.Add(mustURL(t, "http://a.test/"), Options{})
	var mu sync.Mutex
	var last []byte
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			m := metaMap{}
			done := r.Stage(m, id, Count{Page: true})
			mu.Lock() // the commit: the latest write wins
			for _, v := range m {
				last = v
			}
			mu.Unlock()
			done(true)
		})
	}
	wg.Wait()
	restored := NewRegistry(scope.Config{})
	if err := restored.Restore(canon.New(canon.Config{}).Parse, "1", last); err != nil {
		t.Fatal(err)
	}
	if s, _ := restored.Get(1, true); s.Pages != 50 {
		t.Errorf("the last record says %d pages, want 50", s.Pages)
	}
}

// TestOpenRefusesOptionsOfNoSeed: options keyed by a URL that is not a
// seed are an error naming it, not a silent no-op.
func TestOpenRefusesOptionsOfNoSeed(t *testing.T) {
	a := mustURL(t, "http://a.test/")
	parse := canon.New(canon.Config{}).Parse
	ids, err := NewRegistry(scope.Config{}).Open(metaScan{}, parse, []canon.URL{a}, []string{"http://a.test"}, map[string]Options{"http://a.test": {MaxPages: 1}})
	if err != nil || len(ids) != 1 || ids[0] != IDOf(a.String) {
		t.Fatalf("ids %v, %v", ids, err)
	}
	_, err = NewRegistry(scope.Config{}).Open(metaScan{}, parse, []canon.URL{a}, []string{"http://a.test"}, map[string]Options{"http://b.test/": {MaxPages: 1}})
	if err == nil || !strings.Contains(err.Error(), `"http://b.test/", which is not a seed`) {
		t.Errorf("error %v", err)
	}
}

type metaScan map[string][]byte

func (m metaScan) MetaPrefix(prefix string, fn func(string, []byte) bool) error {
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && !fn(strings.TrimPrefix(k, prefix), v) {
			break
		}
	}
	return nil
}
