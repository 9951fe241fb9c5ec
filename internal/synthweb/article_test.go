package synthweb

import (
	"slices"
	"strings"
	"testing"

	htmlx "github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/simhash"
)

// TestArticles checks the near-duplicate test set against the crawler's
// own SimHash at its default settings: at least 95 % of the pairs of
// articles of one family are within the threshold (the rest are two
// variants of a short story, each with its own change), and every page
// is farther than it from every page outside its family (other articles of the same host,
// with the same navigation and footer, included). It also checks that each
// variant really differs from the first article in its bytes (so a crawler
// sees near, not exact, duplicates) and that the links of every article
// are those of PageInfo, pages the host's tree links anyway, and that each
// shows its host's image.
func TestArticles(t *testing.T) {
	t.Parallel()
	w := startWeb(t, smallConfig())
	type doc struct {
		url, family string
		fp          uint64
		body        []byte
	}
	var docs []doc
	families := map[string]int{}
	for _, p := range w.AllPages() {
		if p.Status != 200 || !strings.HasPrefix(p.ContentType, "text/html") {
			continue
		}
		body := w.Body(p.URL)
		res := htmlx.HTML(body, ProductToken, htmlx.Limits{Words: htmlx.DefaultMaxWords, Embeds: true})
		if p.Role == "article" {
			families[p.Family]++
			if len(res.Words) < minArticleWords {
				t.Errorf("%s: %d words, want at least %d", p.URL, len(res.Words), minArticleWords)
			}
			origin := p.URL[:len("http://")+strings.IndexByte(p.URL[len("http://"):], '/')]
			var links []string
			for _, l := range res.Links {
				links = append(links, origin+l.URL) // all host-relative
			}
			slices.Sort(links)
			if !slices.Equal(links, p.Links) {
				t.Errorf("%s: links %v, PageInfo says %v", p.URL, links, p.Links)
			}
			if len(res.Embeds) != 1 || len(p.Embeds) != 1 || origin+res.Embeds[0] != p.Embeds[0] {
				t.Errorf("%s: images %v, PageInfo says %v", p.URL, res.Embeds, p.Embeds)
			} else if q, ok := w.Page(p.Embeds[0]); !ok || q.Role != "image" {
				t.Errorf("%s shows %s, not an image of the web", p.URL, p.Embeds[0])
			}
			for _, l := range p.Links {
				if q, ok := w.Page(l); !ok || q.Role != "home" && (q.Role != "page" || q.Disallowed) {
					t.Errorf("%s links %s, not an allowed page of the tree", p.URL, l)
				}
			}
		}
		if len(res.Words) < 50 {
			continue // too short for the crawler to judge (the boilerplate)
		}
		docs = append(docs, doc{p.URL, p.Family, simhash.Fingerprint(res.Words, simhash.DefaultShingle), body})
	}
	if len(families) != 2*len(w.Seeds()) {
		t.Fatalf("%d article families, want 2 per host", len(families))
	}
	maxIn, minOut, pairs, found := 0, 64, 0, 0
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			a, b := docs[i], docs[j]
			d := simhash.Distance(a.fp, b.fp)
			switch {
			case a.family != "" && a.family == b.family:
				maxIn = max(maxIn, d)
				pairs++
				if d <= simhash.DefaultThreshold {
					found++
				}
				if string(a.body) == string(b.body) {
					t.Errorf("%s and %s: identical bodies", a.url, b.url)
				}
			default:
				minOut = min(minOut, d)
				if d <= simhash.DefaultThreshold {
					t.Errorf("%s and %s: %d bits apart, not of one family", a.url, b.url, d)
				}
			}
		}
	}
	recall := float64(found) / float64(pairs)
	t.Logf("%d pages, %d article families: largest distance in a family %d bits, smallest between pages of no common family %d; pairs of one family within %d bits: %d of %d (%.3f)",
		len(docs), len(families), maxIn, minOut, simhash.DefaultThreshold, found, pairs, recall)
	if recall < 0.95 {
		t.Errorf("only %.3f of the pairs of one family are within the threshold", recall)
	}
}
