package judge

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/store"
)

// A shop whose crawl walks one category's filters depth first has most of
// a window's pages copies, all under that category's filter: the
// directory they are under is cut off, not the host. A URL under it is
// refused, and dropped when leased; the category's other filters, its
// other categories and its products are not. The window starts again:
// the pages under the directory, queued before the cut, no longer count,
// and copies under another directory cut that one off too (the second
// category). Copies all over a host cut off the host, and so do copies
// under a ninth directory. A resumed crawl reads the directories back from the
// store, and from the page's batch alone (a crash before the host's
// state was saved).
func TestCopiesCutTheirDirectory(t *testing.T) {
	parse := urlParser(t)
	db, b := windowStore(t)
	j := windowJudge(20)
	judged := func(raw, of string) {
		u := parse(raw)
		j.JudgedPage(b, u.Authority, u, "", of)
	}
	cut := func(raw string) bool { return j.copies.trappedInMemory(parse(raw)) }
	const cat = "http://shop.test/c/hats/"
	judged(cat, "")
	for i := range 19 { // 11 copies of 20: the window is full
		of := ""
		if i%5 != 0 {
			of = cat + "color-green/size-38/"
		}
		judged(fmt.Sprintf("%scolor-green/size-%d/material-%d/", cat, 38+i%6, i), of)
	}
	if n, names := j.Cut(); n != 1 || !slices.Equal(names, []string{"shop.test/c/hats/color-green/"}) {
		t.Fatalf("cut off: %d %v, want shop.test/c/hats/color-green/", n, names)
	}
	if j.Trapped(canon.URL{Authority: "shop.test"}) {
		t.Fatal("the host is cut off, want a directory of it")
	}
	for raw, want := range map[string]bool{
		cat + "color-green/size-40/":              true,
		cat + "color-green/size-40/a/b/":          false, // deeper than its copies
		cat + "color-green/":                      false, // the filter's own page
		cat + "color-red/size-40/":                false,
		cat + "page-2/":                           false,
		"http://shop.test/c/boots/":               false,
		"http://shop.test/p/hats-12/":             false,
		"http://other.test/c/hats/color-green/x/": false,
	} {
		if got := cut(raw); got != want {
			t.Errorf("%s cut off %v, want %v", raw, got, want)
		}
		if got := j.Learnt(parse(raw), cat, false, false) == Trap; got != want {
			t.Errorf("%s dropped when leased %v, want %v", raw, got, want)
		}
	}
	if j.Learnt(parse(cat+"color-green/size-40/"), cat, false, true) != "" {
		t.Error("a redirect's target under the directory is dropped when leased")
	}
	// The pages queued under it, fetched after the cut, do not count.
	for range 40 {
		judged(cat+"color-green/size-42/material-9/", cat+"color-green/size-38/")
	}
	if n, _ := j.Cut(); n != 1 {
		t.Fatalf("the directory's own copies cut again: %d cut off", n)
	}
	// Copies under another category cut that one off too.
	dir := "http://shop.test/c/boots/"
	for i := range 20 {
		judged(fmt.Sprintf("%ssize-%d/", dir, i), dir)
	}
	if n, _ := j.Cut(); n != 2 || !cut(dir+"x/") || !cut(cat+"color-green/x/") || cut(cat+"page-2/") {
		t.Fatalf("after copies under %s: %d cut off, want it and the first", dir, n)
	}
	// A host with copies under one directory after another is cut off at
	// the (maxCutDirs+1)th.
	for d := range maxCutDirs + 1 {
		dir := fmt.Sprintf("http://many.test/d%d/", d)
		for i := range 20 {
			judged(fmt.Sprintf("%s%d/", dir, i), dir)
		}
		if !cut(dir + "x/") {
			t.Fatalf("%s not cut off", dir)
		}
		if want := d == maxCutDirs; j.Trapped(canon.URL{Authority: "many.test"}) != want {
			t.Fatalf("after %d directories: host cut off %v, want %v", d+1, !want, want)
		}
	}
	// What a directory cut off costs the host's state is bounded: the
	// copies under a long path cut off its first bytes.
	long := "http://long.test/" + strings.Repeat("a", 2*maxDirBytes) + "/"
	for i := range 20 {
		judged(fmt.Sprintf("%s%d", long, i), long)
	}
	if !cut(long+"x") || j.Trapped(canon.URL{Authority: "long.test"}) || cut("http://long.test/blog/x") {
		t.Error("copies under a long path: want its first bytes cut off")
	}
	if st, _ := j.copies.states.Peek("long.test"); len(st.NearDirs) > maxDirBytes+8 {
		t.Errorf("the host's state keeps %d bytes of directories", len(st.NearDirs))
	}
	// Copies all over a host cut the host off.
	for i := range 20 {
		judged(fmt.Sprintf("http://all.test/%d/x", i), "http://all.test/")
	}
	if !j.Trapped(canon.URL{Authority: "all.test"}) {
		t.Error("a host whose copies are all over it: not cut off")
	}

	// A resumed crawl, from the host states kept in the store.
	states := hostmap.New[store.HostState](1)
	j.copies.states.Each(func(host string, st store.HostState) {
		states.Update(host, func(store.HostState) store.HostState { return st })
	})
	j = New(Config{Hosts: states, NearDupWindow: 20, Partitions: 1, Log: slog.New(slog.DiscardHandler)})
	if !cut(cat+"color-green/size-40/") || cut(cat+"page-2/") {
		t.Error("the directories kept in the host's state are not read back")
	}
	// A resumed crawl from the page's batch alone.
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	j = windowJudge(20)
	if err := j.LoadCuts(db); err != nil {
		t.Fatal(err)
	}
	if !cut(cat+"color-green/size-40/") || cut(cat+"page-2/") || !cut("http://shop.test/c/boots/a/") || !j.Trapped(canon.URL{Authority: "all.test"}) || !j.Trapped(canon.URL{Authority: "many.test"}) {
		t.Error("the directories cut off are not read back from the store")
	}
	if n, _ := j.Cut(); n != 2+maxCutDirs+1+1+1 {
		t.Errorf("%d cut off read back, want %d", n, 2+maxCutDirs+1+1+1)
	}
}

func TestCommonDir(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"/c/hats/", "/c/hats/x/", "/c/hats/"},
		{"/c/ab/", "/c/ac/", "/c/"},
		{"/x/", "/y/", "/"},
		{"/day/", "/day/", "/day/"},
		{"/cal/2026/11/", "/cal/2025/", "/cal/"},
	} {
		if got := commonDir(c.a, c.b); got != c.want {
			t.Errorf("commonDir(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
	if dirOf("/cal/2026/11/03") != "/cal/2026/11/" || dirOf("") != "/" {
		t.Error("dirOf")
	}
}

// A cut reaches as deep as its copies: a store whose filters' copies are
// /collections/shoes/red+wool keeps its products one segment deeper,
// /collections/shoes/products/boot. Copies that differ by their query
// alone cut off their own path's queries, not the page. A directory
// whose copies cut it off again (a crash that kept the cut and lost the
// window, read back: LoadCuts starts the window again; or copies the cut
// does not reach) cuts off the host. A window whose copies' directory is
// unknown (a state kept by a build before directories) cuts off the host.
func TestCopiesCutAsDeepAsTheyAre(t *testing.T) {
	parse := urlParser(t)
	j := windowJudge(20)
	b := new(store.Batch)
	judged := func(raw, of string) {
		u := parse(raw)
		j.JudgedPage(b, u.Authority, u, "", of)
	}
	cut := func(raw string) bool { return j.copies.trappedInMemory(parse(raw)) }
	const col = "http://store.test/collections/shoes"
	for i := range 12 { // the copies come in the window's second round
		judged(fmt.Sprintf("http://store.test/pages/about-%d", i), "")
	}
	for i := range 20 {
		if i%3 == 0 {
			judged(fmt.Sprintf("%s/products/boot-%d", col, i), "")
		} else {
			judged(fmt.Sprintf("%s/red+t%d", col, i), col+"/red")
		}
	}
	if _, names := j.Cut(); !slices.Equal(names, []string{"store.test/collections/shoes/"}) {
		t.Fatalf("cut off %v, want the collection's directory", names)
	}
	if !cut(col+"/blue+wool") || cut(col+"/products/boot-99") || cut(col) || cut(col+"?page=2") {
		t.Error("want the collection's filters cut off, not its products, its page or its next page")
	}

	for _, list := range []string{"http://q.test/c/hats/", "http://q.test/collections/shoes", "http://q.test/search"} {
		for i := range 20 + maxRespelt { // the first respellings of a page do not count
			judged(fmt.Sprintf("%s?sort=%d", list, i), list)
		}
		if !cut(list+"?sort=99") || cut(list) || cut("http://q.test/c/boots/?sort=1") || cut("http://q.test/collections/boots") {
			t.Errorf("copies of %s by their query: want the path's queries cut off, not its page, nor its neighbours", list)
		}
	}
	if j.Trapped(canon.URL{Authority: "q.test"}) {
		t.Error("copies by their query under /: the host cut off")
	}
	// A cut made by deeper copies keeps its directory's own queries (a
	// listing's next page).
	if cut("http://shop.test/c/hats/color-green/?page=2") {
		t.Error("a directory's own page with a query is refused")
	}

	// The same directory's copies again: the host.
	for i := range 20 {
		judged(fmt.Sprintf("http://again.test/day/%d", i), "http://again.test/")
	}
	j.copies.states.Update("again.test", func(w store.HostState) store.HostState { // forget the cut, keep its line
		d := parseNearDirs(w.NearDirs)
		d.cuts = cuts(strings.ReplaceAll(string(d.cuts), "\t2", "\t0"))
		w.NearDirs = d.String()
		return w
	})
	for i := range 20 {
		judged(fmt.Sprintf("http://again.test/day/%d", 100+i), "http://again.test/")
	}
	if !j.Trapped(canon.URL{Authority: "again.test"}) {
		t.Error("a directory's copies cut it off twice: want the host cut off")
	}

	// A state kept before directories: a window of copies, none known.
	j.copies.states.Update("old.test", func(w store.HostState) store.HostState {
		w.NearRing, w.NearPages, w.NearNext = 1<<19-1, 19, 19
		return w
	})
	judged("http://old.test/a/b", "")
	if !j.Trapped(canon.URL{Authority: "old.test"}) || cut("http://old.test/x") != true {
		t.Error("a window of copies whose directory is unknown: want the host cut off")
	}
}

// What cuts a directory off is where the copies of the window's last two
// rounds are: a stray copy of a round before them, though some copy was
// in the window all along, does not make the host's whole tree theirs.
// A cut read back from the page's batch alone (a crash that kept the
// host's state from before it) starts the window again: the copies that
// cut the directory do not cut it again, nor the host.
func TestCopiesOfTheWindowCut(t *testing.T) {
	j := windowJudge(20)
	db, b := windowStore(t)
	judged := judgedIn(t, b, "http://s.test/c/hats/")
	for i := range 40 { // a copy under /blog/, then two under /c/hats/: some copy in the window all along
		judged(j, fmt.Sprintf("http://s.test/p/%d", i), false)
		switch i {
		case 0:
			judged(j, "http://s.test/blog/x", true)
		case 9, 22:
			judged(j, fmt.Sprintf("http://s.test/c/hats/a%d", i), true)
		}
	}
	for i := range 11 {
		judged(j, fmt.Sprintf("http://s.test/c/hats/b%d", i), true)
	}
	if _, names := j.Cut(); !slices.Equal(names, []string{"s.test/c/hats/"}) || j.Trapped(canon.URL{Authority: "s.test"}) {
		t.Fatalf("cut off %v, want s.test/c/hats/ (a stray copy long gone)", names)
	}

	// The same copies again, to the page before the cut, in a judge whose
	// state is kept; the cut comes back from the batch alone.
	states := hostmap.New[store.HostState](1)
	k := New(Config{Hosts: states, NearDupWindow: 20, Partitions: 1, Log: slog.New(slog.DiscardHandler)})
	for i := range 19 {
		judged(k, fmt.Sprintf("http://s.test/c/hats/b%d", i), true)
	}
	if n, _ := k.Cut(); n != 0 {
		t.Fatal("cut off before the window is full")
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := k.LoadCuts(db); err != nil {
		t.Fatal(err)
	}
	judged(k, "http://s.test/p/last", false)
	if n, names := k.Cut(); n != 1 || k.Trapped(canon.URL{Authority: "s.test"}) {
		t.Errorf("after the cut read back: %d cut off %v, host %v; want s.test/c/hats/ alone", n, names, k.Trapped(canon.URL{Authority: "s.test"}))
	}
}

// windowJudge is a Judge of the near-duplicate window of size pages, its
// host states in memory.
// windowStore opens a store for the cuts a window makes, and a batch of
// it, both closed when the test ends.
func windowStore(t *testing.T) (*store.DB, *store.Batch) {
	t.Helper()
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := db.NewBatch()
	t.Cleanup(func() { b.Close() })
	return db, b
}

// judgedIn returns a function that has a judge weigh the page raw into
// batch b's cuts, as a copy of the page of (copied) or distinct.
func judgedIn(t *testing.T, b *store.Batch, of string) func(j *Judge, raw string, copied bool) {
	parse := urlParser(t)
	return func(j *Judge, raw string, copied bool) {
		t.Helper()
		u := parse(raw)
		original := ""
		if copied {
			original = of
		}
		j.JudgedPage(b, u.Authority, u, "", original)
	}
}

func windowJudge(size int) *Judge {
	return New(Config{Hosts: hostmap.New[store.HostState](1), NearDupWindow: size, Partitions: 1, Log: slog.New(slog.DiscardHandler)})
}

// A forge's files at each commit are copies of one another under the
// repository's directory, each with the commit's hash as its fifth
// segment, beside copies without one (the main files' histories): the
// cut refuses what has a hash there (a file, a tree, a raw view at a
// commit), not the repository's files as they are now nor its commit
// pages, whose hash is their fourth segment, nor another repository. It
// comes back from the store, and a line written before tokens reads as
// a cut of the whole directory. Copies without a token under the
// repository that fill the window again cut it whole, not the host; and
// a third time, the host. Copies whose tokens are at different segments
// cut their directory whole; copies with a session's token under
// different directories cut what has the token, not the host.
func TestCopiesCutAGeneratedSegment(t *testing.T) {
	parse := urlParser(t)
	db, b := windowStore(t)
	j := windowJudge(20)
	judged := judgedIn(t, b, "http://git.test/alice/app/src/branch/main/main.go")
	hash := func(i int) string { return fmt.Sprintf("9f3a1c0d2b44e1f07a6b5c3d%016x", i) }
	for i := range 20 { // 15 copies of 20
		switch {
		case i%4 == 0:
			judged(j, "http://git.test/alice/app/commit/"+hash(i), false)
		case i%4 == 1:
			judged(j, fmt.Sprintf("http://git.test/alice/app/commits/branch/main/f%d.go", i), true)
		case i%4 == 2:
			judged(j, "http://git.test/alice/app/blame/commit/"+hash(i)+"/docs/usage.md", true)
		default:
			judged(j, "http://git.test/alice/app/src/commit/"+hash(i)+"/main.go", true)
		}
	}
	want := "git.test/alice/app/ token@5"
	if _, names := j.Cut(); !slices.Equal(names, []string{want}) {
		t.Fatalf("cut off %v, want %s", names, want)
	}
	cases := map[string]bool{
		"http://git.test/alice/app/src/commit/" + hash(99) + "/server.go":    true,
		"http://git.test/alice/app/src/commit/" + hash(99):                   true,
		"http://git.test/alice/app/raw/commit/" + hash(99) + "/docs/x.md":    true,
		"http://git.test/alice/app/commit/" + hash(99):                       false, // a commit page
		"http://git.test/alice/app/src/branch/main/server.go":                false,
		"http://git.test/alice/app/commits/branch/main/server.go":            false, // left to the window
		"http://git.test/alice/app/src/commit/" + hash(99) + "/a/b/c/d/e.go": false, // deeper than the copies
		"http://git.test/bob/lib/src/commit/" + hash(99) + "/main.go":        false,
	}
	check := func(j *Judge, when string) {
		t.Helper()
		for raw, want := range cases {
			if got := j.copies.trappedInMemory(parse(raw)); got != want {
				t.Errorf("%s: %s cut off %v, want %v", when, raw, got, want)
			}
		}
	}
	check(j, "cut")
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	k := windowJudge(20)
	if err := k.LoadCuts(db); err != nil {
		t.Fatal(err)
	}
	check(k, "read back")
	if _, names := k.Cut(); !slices.Equal(names, []string{want}) {
		t.Errorf("read back %v, want %s", names, want)
	}
	if c := parseDirCut("/alice/app/\t7"); c.token != 0 || !(cuts(c.line() + "\n")).refuse(parse("http://git.test/alice/app/src/branch/main/x.go")) {
		t.Errorf("a cut written before tokens: %+v; want the whole directory", c)
	}
	// Copies without a token under the repository fill the window again:
	// the repository is cut whole, not the host; a third time, the host.
	tokenless := func(j *Judge, round int) {
		for i := range 20 {
			kind := []string{"src", "commits"}[i%2]
			judged(j, fmt.Sprintf("http://git.test/alice/app/%s/branch/main/r%d-%d.go", kind, round, i), true)
		}
	}
	tokenless(j, 1)
	if _, names := j.Cut(); !slices.Equal(names, []string{want, "git.test/alice/app/"}) || j.Trapped(canon.URL{Authority: "git.test"}) ||
		!j.copies.trappedInMemory(parse("http://git.test/alice/app/src/branch/main/server.go")) {
		t.Errorf("after tokenless copies: cut off %v, host cut %v; want the repository cut whole, not the host", names, j.Trapped(canon.URL{Authority: "git.test"}))
	}
	for i := range 20 { // deeper than the cuts, so still judged
		judged(j, fmt.Sprintf("http://git.test/alice/app/%s/a/b/c/d/e/p%d", []string{"wiki", "issues"}[i%2], i), true)
	}
	if !j.Trapped(canon.URL{Authority: "git.test"}) {
		t.Error("copies under a repository cut twice: want the host cut off")
	}

	// Tokens at different segments: the directory cut whole.
	m := windowJudge(20)
	for i := range 20 {
		raw := "http://mixed.test/a/src/" + hash(i) + "/x.go"
		if i == 1 { // one at another segment, early: the disagreement stays
			raw = "http://mixed.test/a/b/src/" + hash(i) + "/x.go"
		}
		judged(m, raw, true)
	}
	if _, names := m.Cut(); !slices.Equal(names, []string{"mixed.test/a/"}) {
		t.Errorf("copies with tokens at segments 3 and 4: cut off %v, want mixed.test/a/ whole", names)
	}

	// A session's token under every directory of a host: its cut is of
	// /, for what has the token there, and the host stays.
	sess := windowJudge(20)
	for i := range 20 {
		judged(sess, fmt.Sprintf("http://sess.test/%s/p%d", hash(i), i%3), true)
	}
	if _, names := sess.Cut(); !slices.Equal(names, []string{"sess.test/ token@1"}) || sess.Trapped(canon.URL{Authority: "sess.test"}) ||
		!sess.copies.trappedInMemory(parse("http://sess.test/"+hash(99)+"/p1")) || sess.copies.trappedInMemory(parse("http://sess.test/about/p1")) {
		t.Errorf("copies under a session's token: cut off %v; want sess.test/ token@1, not the host, nor a page without the token", names)
	}
}
