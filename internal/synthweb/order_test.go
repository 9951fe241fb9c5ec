package synthweb

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// orderTestConfig is a WorldOrder web big enough to show the shape of the
// default one (100 hosts of about 500 pages) and quick to build.
func orderTestConfig(seed int64) Config {
	return Config{World: WorldOrder, Seed: seed, Hosts: 40, PagesPerHost: 300}
}

// The order world is what weft bench order needs it to be: every page
// reachable from the home pages; 40 to 80 links a page, about 30 % of
// them to another host; a heavy-tailed in-degree; the pages that hold
// the most PageRank deep, so that breadth-first holds far less of it
// than the best order after a tenth of the pages.
func TestOrderWorldShape(t *testing.T) {
	w := startWeb(t, orderTestConfig(7))
	g := w.OrderGraph()
	n := g.Len()
	if n < 40*300*4/5 || n > 40*300*6/5 || n != w.URLCount() {
		t.Fatalf("%d pages (URLCount %d), want about 40 x 300", n, w.URLCount())
	}
	if want := w.Seeds(); len(g.Seeds) != len(want) || g.URLs[g.Seeds[0]] != want[0] || g.URLs[g.Seeds[39]] != want[39] {
		t.Errorf("the graph's seeds are not the web's home pages")
	}
	depth := g.Depths()
	shallow := 0
	for p, d := range depth {
		if d < 0 {
			t.Fatalf("%s: no seed reaches it", g.URLs[p])
		}
		if d <= 2 {
			shallow++
		}
	}
	if shallow < n/4 {
		t.Errorf("%d of %d pages within two hops of a home page, want a long shallow tail (a quarter at least)", shallow, n)
	}

	cross, inDegree := 0, make([]int, n)
	for p := range int32(n) {
		links := g.Links(p)
		if len(links) < 40 || len(links) > 80 {
			t.Errorf("%s has %d links, want 40 to 80", g.URLs[p], len(links))
		}
		seen := map[int32]bool{}
		for _, q := range links {
			if q == p || seen[q] {
				t.Fatalf("%s links %s twice, or itself", g.URLs[p], g.URLs[q])
			}
			seen[q] = true
			inDegree[q]++
			if g.Hosts[q] != g.Hosts[p] {
				cross++
			}
		}
	}
	if share := float64(cross) / float64(len(g.To)); share < 0.25 || share > 0.35 {
		t.Errorf("%.3f of the links cross hosts, want about 0.3", share)
	}
	slices.Sort(inDegree)
	slices.Reverse(inDegree)
	top := 0
	for _, d := range inDegree[:n/100] {
		top += d
	}
	if share := float64(top) / float64(len(g.To)); share < 0.10 {
		t.Errorf("the top 1 %% of pages have %.3f of the links in, want ten times their share at least", share)
	}

	rank := g.PageRank(0.85, 1e-10)
	best := RankOrder(rank)
	var depths []int32
	for _, p := range best[:n/10] {
		depths = append(depths, depth[p])
	}
	slices.Sort(depths)
	if d := depths[len(depths)/2]; d < 3 {
		t.Errorf("the tenth of the pages with the most PageRank are a median %d hops from a home page, want 3 at least", d)
	}
	deep := 0.0
	for p, r := range rank {
		if depth[p] >= 3 {
			deep += r
		}
	}
	if deep < 0.6 {
		t.Errorf("pages 3 hops deep or more hold %.3f of the PageRank, want most of it", deep)
	}
	k := n / 10
	bfs, _ := MassAt(g.BreadthFirstByHost(), rank, k)
	top10, _ := MassAt(best, rank, k)
	if bfs > top10/2 {
		t.Errorf("after a tenth of the pages breadth-first holds %.3f of the PageRank, the best order %.3f: want less than half", bfs, top10)
	}
}

// The articles hang three to six levels below the home page in their
// site's tree: the listings link only the recent ones, three levels down,
// the pages above them no article at all, and every older article is
// linked by an article one level up, its parent.
func TestOrderWorldTree(t *testing.T) {
	w := startWeb(t, orderTestConfig(7))
	o, g := w.order, w.OrderGraph()
	var levels [orderDeepest + 1]int
	hasParent := make([]bool, g.Len())
	articles := 0
	for p := range int32(g.Len()) {
		for _, q := range g.Links(p) {
			if o.kind[q] != orderKindArticle || g.Hosts[q] != g.Hosts[p] {
				continue
			}
			switch {
			case o.kind[p] == orderKindArticle:
				if o.depth[q] == o.depth[p]+1 {
					hasParent[q] = true
				}
			case o.depth[p] < 2 || o.depth[q] != 3:
				t.Fatalf("%s (level %d) links %s (level %d): want only recent articles linked from listings", g.URLs[p], o.depth[p], g.URLs[q], o.depth[q])
			}
		}
		if o.kind[p] == orderKindArticle {
			articles++
			levels[o.depth[p]]++
		}
	}
	for p := range int32(g.Len()) {
		if o.kind[p] == orderKindArticle && o.depth[p] > 3 && !hasParent[p] {
			t.Errorf("%s, level %d: no article of level %d links it", g.URLs[p], o.depth[p], o.depth[p]-1)
		}
	}
	for d := 3; d <= orderDeepest; d++ {
		if levels[d] < articles/10 {
			t.Errorf("%d of %d articles at level %d, want a tenth at least at each of levels 3 to %d", levels[d], articles, d, orderDeepest)
		}
	}
	if articles < g.Len()/2 {
		t.Errorf("%d articles of %d pages, want most of them", articles, g.Len())
	}
}

// The same seed makes the same web, whatever its ports; another seed
// another one.
func TestOrderWorldDeterministic(t *testing.T) {
	cfg := orderTestConfig(7)
	cfg.Hosts = 5
	a, b := startWeb(t, cfg), startWeb(t, cfg)
	cfg.Seed = 8
	c := startWeb(t, cfg)
	ga, gb, gc := a.OrderGraph(), b.OrderGraph(), c.OrderGraph()
	paths := func(w *Web, g *LinkGraph) []string {
		var out []string
		for p, u := range g.URLs {
			out = append(out, strings.TrimPrefix(u, "http://"+w.Hosts()[g.Hosts[p]].Authority))
		}
		return out
	}
	if !slices.Equal(paths(a, ga), paths(b, gb)) || !slices.Equal(ga.Off, gb.Off) || !slices.Equal(ga.To, gb.To) {
		t.Fatal("two webs of one seed have different graphs")
	}
	if slices.Equal(paths(a, ga), paths(c, gc)) && slices.Equal(ga.To, gc.To) {
		t.Error("two seeds made the same graph")
	}
	// Bodies name hosts with their ports: compare them by name.
	byName := func(w *Web, body string) string {
		for _, h := range w.Hosts() {
			body = strings.ReplaceAll(body, h.Authority, h.Name)
		}
		return body
	}
	ca, cb := newClient(t, a), newClient(t, b)
	for _, p := range []int32{0, 1, ga.Off[1] % int32(ga.Len()), int32(ga.Len() - 1)} {
		ba, _ := orderGet(t, ca, ga.URLs[p])
		bb, _ := orderGet(t, cb, gb.URLs[p])
		if byName(a, ba) != byName(b, bb) {
			t.Errorf("%s: two webs of one seed serve different bodies", ga.URLs[p])
		}
	}
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// Every page is served with the links of the graph, within the size
// bounds; robots.txt allows everything; there is no sitemap; OrderPage
// names the page of each request the log holds, in any spelling the web
// answers.
func TestOrderWorldServes(t *testing.T) {
	cfg := orderTestConfig(3)
	cfg.Hosts, cfg.PagesPerHost = 3, 250
	w := startWeb(t, cfg)
	g := w.OrderGraph()
	c := newClient(t, w)
	for p := range int32(g.Len()) {
		body, status := orderGet(t, c, g.URLs[p])
		if status != http.StatusOK {
			t.Fatalf("%s: status %d", g.URLs[p], status)
		}
		if len(body) < 6<<10 || len(body) > 16<<10+1<<10 {
			t.Errorf("%s: %d bytes, want 6 KB to 16 KB (a little over when its links outgrow it)", g.URLs[p], len(body))
		}
		base, _ := url.Parse(g.URLs[p])
		found := map[string]bool{}
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			u, err := base.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatalf("%s: bad link %q: %v", g.URLs[p], m[1], err)
			}
			if s := u.String(); s != g.URLs[p] {
				found[s] = true
			}
		}
		var want []string
		for _, q := range g.Links(p) {
			want = append(want, g.URLs[q])
		}
		got := slices.Sorted(func(yield func(string) bool) {
			for s := range found {
				if !yield(s) {
					return
				}
			}
		})
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s links\n%v\nwant the graph's\n%v", g.URLs[p], got, want)
		}
	}
	home := w.Seeds()[1]
	if body, status := orderGet(t, c, home+"robots.txt"); status != http.StatusOK || body != "" {
		t.Errorf("robots.txt: status %d, %q; want 200 and an empty file", status, body)
	}
	if _, status := orderGet(t, c, home+"sitemap.xml"); status != http.StatusNotFound {
		t.Errorf("sitemap.xml: status %d, want 404", status)
	}
	if _, status := orderGet(t, c, home+"no/such/page"); status != http.StatusNotFound {
		t.Errorf("an unknown page: status %d, want 404", status)
	}
	id := slices.IndexFunc(g.URLs, func(u string) bool { return strings.Contains(u, "&view=") })
	if id < 0 {
		t.Fatal("no facet of two parameters")
	}
	facet := g.URLs[id]
	path, query, _ := strings.Cut(facet, "?")
	sort, view, _ := strings.Cut(query, "&")
	before := len(w.Log())
	orderGet(t, c, path+"?"+view+"&utm_source=x&"+sort)
	orderGet(t, c, home+"robots.txt")
	orderGet(t, c, home+"nowhere")
	log := w.Log()[before:]
	if p, ok := w.OrderPage(log[0]); !ok || p != int32(id) {
		t.Errorf("OrderPage(%s) = %d, %v; want %d (%s)", log[0].Path, p, ok, id, facet)
	}
	for _, r := range log[1:] {
		if p, ok := w.OrderPage(r); ok {
			t.Errorf("OrderPage(%s) = %d: want no page", r.Path, p)
		}
	}
}

func orderGet(t *testing.T, c *http.Client, u string) (string, int) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return string(b), resp.StatusCode
}
