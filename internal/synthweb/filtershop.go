package synthweb

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// FilterShop is a small shop whose filters are in its paths, in the order
// they were clicked, as many small shops write them: "/" links its
// FilterShopCategories categories, /c/NAME/, each of FilterShopPerCat
// products, /p/NAME-N/, listed filterShopPerPage a page
// (/c/NAME/page-2/). A listing links every value of each filter not set
// yet, colour, size and material (/c/hats/color-green/, then
// /c/hats/color-green/size-38/ or /c/hats/size-38/color-green/), each
// value keeping about a third of the products. A listing reads as shops
// render one: the category's blurb, the filters set, and a tile of text
// for each product it lists; so listings of the same few products read
// alike, and one with every filter set links nothing new. Of its
// thousands of listings, the categories' own and their second pages list
// every product.
const FilterShop = "filter-shop"

// FilterPairShop is FilterShop with each filter written as a name and a
// value, two segments (/c/hats/color/green/size/38/), as some shop
// software writes them.
const FilterPairShop = "filter-pair-shop"

// The shop's catalogue.
const (
	FilterShopCategories = 5
	FilterShopPerCat     = 20
	filterShopPerPage    = 12
)

var (
	filterShopCategories = [FilterShopCategories]string{"shoes", "boots", "hats", "coats", "bags"}
	filterShopFilters    = [...][]string{
		{"color-red", "color-blue", "color-green", "color-black", "color-white"},
		{"size-38", "size-40", "size-42", "size-44", "size-46", "size-48"},
		{"material-wool", "material-cotton", "material-linen", "material-leather"},
	}
)

// filterShopKeeps reports whether filter value v keeps product n of
// category c.
func filterShopKeeps(c, n int, v string) bool { return hashString(fmt.Sprint(c, n, v))%3 == 0 }

// serveFilterShop answers FilterShop.
func (w *Web) serveFilterShop(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	nav := []string{"/"}
	for _, c := range filterShopCategories {
		nav = append(nav, "/c/"+c+"/")
	}
	if path == "/" {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, "/", "Shop", trapWords, nav))
		return
	}
	if rest, ok := strings.CutPrefix(path, "/p/"); ok {
		name, num, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "-")
		n, err := strconv.Atoi(num)
		if !slices.Contains(filterShopCategories[:], name) || err != nil || n < 0 || n >= FilterShopPerCat || path != "/p/"+name+"-"+strconv.Itoa(n)+"/" {
			notFound(rw, r)
			return
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Product "+rest, trapWords, []string{"/", "/c/" + name + "/"}))
		return
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	c := -1
	if len(segs) >= 2 && segs[0] == "c" && strings.HasSuffix(path, "/") {
		c = slices.Index(filterShopCategories[:], segs[1])
	}
	if c < 0 {
		notFound(rw, r)
		return
	}
	set, page := segs[2:], 1
	if n := len(set); n > 0 && strings.HasPrefix(set[n-1], "page-") {
		p, err := strconv.Atoi(set[n-1][len("page-"):])
		if err != nil || p < 2 {
			notFound(rw, r)
			return
		}
		set, page = set[:n-1], p
	}
	pairs := h.hostile == FilterPairShop
	inPath := func(v string) string { return v } // a filter's value as its path writes it
	if pairs {
		if len(set)%2 != 0 {
			notFound(rw, r)
			return
		}
		var joined []string
		for i := 0; i < len(set); i += 2 {
			joined = append(joined, set[i]+"-"+set[i+1])
		}
		set = joined
		inPath = func(v string) string { return strings.Replace(v, "-", "/", 1) }
	}
	var unset [][]string
	for _, f := range filterShopFilters {
		k := 0
		for _, s := range set {
			if slices.Contains(f, s) {
				k++
			}
		}
		if k > 1 {
			notFound(rw, r)
			return
		}
		if k == 0 {
			unset = append(unset, f)
		}
	}
	if len(set)+len(unset) != len(filterShopFilters) {
		notFound(rw, r) // a segment no filter has
		return
	}
	var found []int
	for n := range FilterShopPerCat {
		if !slices.ContainsFunc(set, func(v string) bool { return !filterShopKeeps(c, n, v) }) {
			found = append(found, n)
		}
	}
	if (page-1)*filterShopPerPage >= max(len(found), 1) {
		notFound(rw, r)
		return
	}
	shown := found[(page-1)*filterShopPerPage : min(page*filterShopPerPage, len(found))]
	base := "/c/" + filterShopCategories[c] + "/"
	for _, s := range set {
		base += inPath(s) + "/"
	}
	links := slices.Clone(nav)
	for _, n := range shown {
		links = append(links, fmt.Sprintf("/p/%s-%d/", filterShopCategories[c], n))
	}
	if len(found) > page*filterShopPerPage {
		links = append(links, fmt.Sprintf("%spage-%d/", base, page+1))
	}
	for _, f := range unset {
		for _, v := range f {
			links = append(links, base+inPath(v)+"/")
		}
	}
	// The listing as a shop renders it: the category's blurb, the filters
	// set, a tile per product; then its links.
	ki, _ := hostileKindIndex(h.hostile)
	sorted := slices.Sorted(slices.Values(set))
	b := []byte("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + filterShopCategories[c] + "</title>\n</head>\n<body>\n<h1>" +
		filterShopCategories[c] + "</h1>\n<p>Filters: " + strings.Join(sorted, ", ") + "</p>\n<p>")
	blurb := newRNG(w.cfg.Seed, streamTrap, uint64(ki), hashString("blurb "+filterShopCategories[c]))
	b = w.text.appendWords(b, &blurb, 40)
	b = append(b, ".</p>\n"...)
	for _, n := range shown {
		tile := newRNG(w.cfg.Seed, streamTrap, uint64(ki), hashString(fmt.Sprint("tile ", c, n)))
		b = append(b, "<div><h3>"...)
		b = w.text.appendWords(b, &tile, 4)
		b = append(b, "</h3><p>"...)
		b = w.text.appendWords(b, &tile, 40)
		b = append(b, "</p></div>\n"...)
	}
	b = appendLinkList(b, links, func(b []byte, href string) []byte { return append(b, strings.Trim(href, "/")...) })
	b = append(b, "</body>\n</html>\n"...)
	writeBody(rw, r, http.StatusOK, htmlUTF8, b)
}
