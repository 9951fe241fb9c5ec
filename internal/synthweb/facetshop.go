package synthweb

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// FacetShop is a shop whose products are reached only through its
// faceted listings, as many catalogues are: "/" links to each category's
// listing, /shop?cat=N; a listing, filtered by any of color, size and
// sort and paginated by page (parameters in that order, "&amp;" between
// them), lists FacetShopPerPage of the category's products, /product/N, and
// links to every listing that sets one more filter, changes one, or turns
// the page. A filter keeps a third (color) or half (size) of the
// category's products; sort reorders them. A listing's text is drawn for
// the products it lists, so two listings of the same products are the
// same page. Each product page links back to its category and "/". Of its
// thousands of listings, the FacetShopCategories unfiltered ones and their
// pages list every product: a crawler that bounds the facets by what
// their pages are worth (new products) finds every product for a fraction
// of them.
const FacetShop = "facet-shop"

// PathFacetShop is FacetShop with its listings in the path, as shops
// write them for search engines: /shop/cat-N/, then /shop/cat-N/color-red/
// and /shop/cat-N/color-red/size-m/ or /shop/cat-N/size-m/color-red/, the
// filters in the order they were set (so each set of filters is listed
// under every order: pages alike), and /page-2/ last.
const PathFacetShop = "path-facet-shop"

// The shop's catalogue.
const (
	FacetShopCategories = 6
	FacetShopProducts   = 240 // FacetShopProducts / FacetShopCategories in each category
	FacetShopPerPage    = 10
)

var facetShopFilters = [...]struct {
	name   string
	values []string
	keep   uint64 // a product is kept by one value in keep
}{
	{"color", []string{"red", "green", "blue", "black", "white"}, 3},
	{"size", []string{"s", "m", "l", "xl"}, 2},
	{"sort", []string{"price", "new", "popular"}, 0},
}

// facetShopListing is a listing: its category, the value of each filter (""
// for none) and its page, from 1.
type facetShopListing struct {
	cat  int
	sel  [len(facetShopFilters)]string
	page int

	inPath bool  // PathFacetShop's
	order  []int // the filters set, in the order they were (inPath)
}

func (l facetShopListing) path() string {
	var b strings.Builder
	if l.inPath {
		fmt.Fprintf(&b, "/shop/cat-%d/", l.cat)
		for _, i := range l.order {
			fmt.Fprintf(&b, "%s-%s/", facetShopFilters[i].name, l.sel[i])
		}
		if l.page > 1 {
			fmt.Fprintf(&b, "page-%d/", l.page)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "/shop?cat=%d", l.cat)
	for i, v := range l.sel {
		if v != "" {
			fmt.Fprintf(&b, "&%s=%s", facetShopFilters[i].name, v)
		}
	}
	if l.page > 1 {
		fmt.Fprintf(&b, "&page=%d", l.page)
	}
	return b.String()
}

// products lists the listing's products, all its pages.
func (l facetShopListing) products() []int {
	var out []int
	for n := l.cat; n < FacetShopProducts; n += FacetShopCategories {
		kept := true
		for i, v := range l.sel {
			if v != "" && facetShopFilters[i].keep > 0 && hashString(fmt.Sprint(n, v))%facetShopFilters[i].keep != 0 {
				kept = false
			}
		}
		if kept {
			out = append(out, n)
		}
	}
	if s := l.sel[len(facetShopFilters)-1]; s != "" {
		slices.SortStableFunc(out, func(a, b int) int {
			return cmp.Compare(hashString(fmt.Sprint(a, s)), hashString(fmt.Sprint(b, s)))
		})
	}
	return out
}

// parseFacetShopListing reads a listing's query, in any order.
func parseFacetShopListing(raw string) (facetShopListing, bool) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return facetShopListing{}, false
	}
	l := facetShopListing{page: 1}
	if l.cat, err = strconv.Atoi(q.Get("cat")); err != nil || l.cat < 0 || l.cat >= FacetShopCategories {
		return facetShopListing{}, false
	}
	if p := q.Get("page"); p != "" {
		if l.page, err = strconv.Atoi(p); err != nil || l.page < 1 {
			return facetShopListing{}, false
		}
	}
	for i, f := range facetShopFilters {
		if v := q.Get(f.name); v != "" {
			if !slices.Contains(f.values, v) {
				return facetShopListing{}, false
			}
			l.sel[i] = v
		}
	}
	return l, true
}

// parsePathFacetShopListing reads a listing's path (PathFacetShop).
func parsePathFacetShopListing(path string) (facetShopListing, bool) {
	segs := strings.Split(strings.TrimSuffix(strings.TrimPrefix(path, "/shop/"), "/"), "/")
	l := facetShopListing{page: 1, inPath: true}
	var err error
	if c, ok := strings.CutPrefix(segs[0], "cat-"); !ok {
		return facetShopListing{}, false
	} else if l.cat, err = strconv.Atoi(c); err != nil || l.cat < 0 || l.cat >= FacetShopCategories {
		return facetShopListing{}, false
	}
	segs = segs[1:]
	if n := len(segs); n > 0 {
		if p, ok := strings.CutPrefix(segs[n-1], "page-"); ok {
			if l.page, err = strconv.Atoi(p); err != nil || l.page < 2 {
				return facetShopListing{}, false
			}
			segs = segs[:n-1]
		}
	}
	for _, seg := range segs {
		name, v, _ := strings.Cut(seg, "-")
		i := slices.IndexFunc(facetShopFilters[:], func(f struct {
			name   string
			values []string
			keep   uint64
		}) bool {
			return f.name == name
		})
		if i < 0 || l.sel[i] != "" || !slices.Contains(facetShopFilters[i].values, v) {
			return facetShopListing{}, false
		}
		l.sel[i] = v
		l.order = append(l.order, i)
	}
	return l, true
}

// serveFacetShop answers FacetShop and PathFacetShop.
func (w *Web) serveFacetShop(rw *logWriter, r *http.Request, h *host) {
	inPath := h.hostile == PathFacetShop
	switch path := r.URL.Path; {
	case path == "/":
		var links []string
		for c := range FacetShopCategories {
			links = append(links, facetShopListing{cat: c, page: 1, inPath: inPath}.path())
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, "/", "Shop", trapWords, links))
	case strings.HasPrefix(path, "/product/"):
		n, err := strconv.Atoi(path[len("/product/"):])
		if err != nil || n < 0 || n >= FacetShopProducts || strconv.Itoa(n) != path[len("/product/"):] {
			notFound(rw, r)
			return
		}
		links := []string{facetShopListing{cat: n % FacetShopCategories, page: 1, inPath: inPath}.path(), "/"}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, fmt.Sprintf("Product %d", n), trapWords, links))
	case path == "/shop" && !inPath, strings.HasPrefix(path, "/shop/") && inPath:
		l, ok := parseFacetShopListing(r.URL.RawQuery)
		if inPath {
			l, ok = parsePathFacetShopListing(path)
		}
		all := l.products()
		pages := max((len(all)+FacetShopPerPage-1)/FacetShopPerPage, 1)
		if !ok || l.page > pages {
			notFound(rw, r)
			return
		}
		shown := all[(l.page-1)*FacetShopPerPage : min(l.page*FacetShopPerPage, len(all))]
		var links []string
		key := "listing"
		for _, n := range shown {
			links = append(links, "/product/"+strconv.Itoa(n))
			key += " " + strconv.Itoa(n)
		}
		for i, f := range facetShopFilters {
			for _, v := range f.values {
				if v != l.sel[i] {
					o := l
					o.sel[i], o.page = v, 1
					if l.sel[i] == "" {
						o.order = append(slices.Clip(l.order), i)
					}
					links = append(links, o.path())
				}
			}
		}
		for p := 1; p <= pages; p++ {
			if p != l.page {
				o := l
				o.page = p
				links = append(links, o.path())
			}
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, key, fmt.Sprintf("Category %d", l.cat), trapWords, links))
	default:
		notFound(rw, r)
	}
}
