package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The news site: its listings lead to every article; an article links
// four searches, of people most of whom no other article names; a
// search fills in the search box, says noindex,follow and lists the
// articles that name the person; the listings' later pages say
// noindex,follow too, and the first pages do not.
func TestNewsroom(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, Newsroom)
	articles, searches := map[string]bool{}, map[string]int{}
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 {
		page := body(queue[0])
		queue = queue[1:]
		for _, l := range hrefs([]byte(page)) {
			switch {
			case strings.HasPrefix(l, "/search?q="):
				searches[l]++
			case seen[l] || l == "/search" || strings.HasPrefix(l, "/print.php") || strings.HasPrefix(l, "/comments"):
			default:
				seen[l] = true
				queue = append(queue, l)
				if _, ok := nrArticle(l); ok {
					articles[l] = true
				}
			}
		}
	}
	if len(articles) != NewsroomArticles {
		t.Errorf("the listings and articles lead to %d articles, want %d", len(articles), NewsroomArticles)
	}
	once := 0
	for _, n := range searches {
		if n == 1 {
			once++
		}
	}
	if len(searches) < 2*NewsroomArticles || once*2 < len(searches) {
		t.Errorf("the articles link %d searches, %d of them once; want more than two an article, most of them linked once", len(searches), once)
	}
	art := NewsroomArticle(130)
	page := body(art)
	named := nrNamed(130)
	if strings.Contains(page, "noindex") || !strings.Contains(page, `href="`+nrSearch(named[0])+`"`) {
		t.Errorf("%s: want no robots directive and a link to %s", art, nrSearch(named[0]))
	}
	results := body(nrSearch(named[0]))
	if !strings.Contains(results, `<meta name="robots" content="noindex,follow">`) || !strings.Contains(results, `href="`+art+`"`) ||
		!strings.Contains(results, "sort=date") {
		t.Errorf("the search for %s: want noindex,follow, %s and its sort by date", named[0], art)
	}
	if !strings.Contains(results, `name="q" value="`+named[0]+`"`) || !strings.Contains(page, `name="q" value=""`) {
		t.Errorf("the search box: want it filled in with %q on the search's results, and empty on an article", named[0])
	}
	if !strings.Contains(body("/search?q=Nobody+Known"), "No results") {
		t.Error("a search for a name no article has does not say it found nothing")
	}
	if strings.Contains(body("/world/"), "noindex") || !strings.Contains(body("/world/?page=2"), "noindex,follow") {
		t.Error("a section's first page says noindex, or its second does not")
	}
	for _, p := range []string{"/world/?page=9", "/world/nothing-1/", "/culture/garden-garden-0/"} {
		if r := get(t, c, site+p); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
	if r := get(t, c, site+"/print.php?article=130"); r.status != http.StatusNotFound || !strings.Contains(page, `href="/print.php?article=130"`) {
		t.Errorf("the print view: %d, want a link to it and 404", r.status)
	}
	if !strings.Contains(page, `href="/comments?article=130"`) || !strings.Contains(body("/comments?article=130"), `href="`+art+`"`) {
		t.Error("article 130's comments: want a link to them, and a page linking back")
	}
	if r := get(t, c, site+"/comments?article=131"); r.status != http.StatusNotFound {
		t.Errorf("article 131's comments, which has none: %d, want 404", r.status)
	}
	if r := get(t, c, site+"/robots.txt"); r.status != http.StatusNotFound {
		t.Errorf("/robots.txt: %d, want 404", r.status)
	}
}
