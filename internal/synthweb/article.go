package synthweb

import (
	"net/http"
	"strconv"
)

// Articles are the near-duplicate test set, and the pages that show an
// image (the host's /img/photo-1.jpg, in an <img> element). Every ordinary host has one
// family of five articles, the same story told with one change each, and
// one article of its own; all of them share the host's navigation and
// footer, so the distinct article differs from the family only in its
// story. Each article is linked once, from a page of the spanning tree,
// and links only to pages the tree links anyway, so whether a crawler
// follows an article's links changes nothing it can reach.

// variant is how an article differs from the first of its family.
type variant uint8

const (
	variantFirst   variant = iota // the story as first published
	variantFooter                 // a longer footer
	variantUpdated                // an "Updated" line with a time stamp
	variantAd                     // an ad block in the middle of the story
	variantNav                    // two other navigation links
	numVariants
)

var variantNames = [numVariants]string{"", "-footer", "-updated", "-ad", "-nav"}

const (
	familyArticle = 1 // /news/1*.html: the family
	singleArticle = 2 // /news/2.html: an article without a family
	navLinks      = 6 // navigation links besides the home page
	// minArticleWords and maxArticleWords bound the length of a story.
	minArticleWords = 300
	maxArticleWords = 1500
)

// addArticles appends the articles of an ordinary host to its pages.
func (w *Web) addArticles(h *host) {
	first := int32(len(h.pages))
	for v := range numVariants {
		h.pages = append(h.pages, page{
			path: "/news/" + strconv.Itoa(familyArticle) + variantNames[v] + ".html",
			role: roleArticle, status: http.StatusOK, family: first, variant: v,
		})
	}
	h.pages = append(h.pages, page{
		path: "/news/" + strconv.Itoa(singleArticle) + ".html",
		role: roleArticle, status: http.StatusOK, family: int32(len(h.pages)),
	})
}

// planArticle fills pl.links with an article's navigation: the home page
// and navLinks allowed pages of the host, two of them others in the nav
// variant.
func (w *Web) planArticle(h *host, p int32, pl *pagePlan) {
	pg := &h.pages[p]
	pl.size, pl.baseDir, pl.baseForm = 0, "", 0
	pl.docPath, _ = splitQuery(pg.path)
	pl.dir = dirOf(pl.docPath)
	links := append(pl.links[:0], linkSpec{to: target{int32(h.idx), pageHome}})
	var pool []int32
	for _, q := range h.linkable {
		if qp := &h.pages[q]; qp.role == rolePage && !qp.disallowed {
			pool = append(pool, q)
		}
	}
	r := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 0)
	shuffle(&r, pool)
	nav := pool[:min(navLinks, len(pool))]
	if pg.variant == variantNav && len(pool) >= navLinks+2 {
		nav = append(append([]int32{}, nav[:navLinks-2]...), pool[navLinks:navLinks+2]...)
	}
	for _, q := range nav {
		links = append(links, linkSpec{to: target{int32(h.idx), q}})
	}
	pl.links = links
}

// renderArticle appends the body of article p, planned in pl.
func (w *Web) renderArticle(dst []byte, h *host, p int32, pl *pagePlan) []byte {
	pg := &h.pages[p]
	// The story comes from the family's stream, the variant's own words
	// from the page's, the footer from the host's.
	sr := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 1+uint64(pg.family))
	vr := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 1+uint64(len(h.pages))+uint64(p))
	fr := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 1+2*uint64(len(h.pages)))

	title := w.text.appendWords(nil, &sr, sr.between(3, 7))
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = append(dst, title...)
	dst = append(dst, " - "...)
	dst = append(dst, h.name...)
	dst = append(dst, "</title>\n</head>\n<body>\n<nav>"...)
	for i, l := range pl.links {
		dst = append(dst, `<a href="`...)
		dst = appendEscapedPath(dst, h.pages[l.to.p].path)
		dst = append(dst, `">`...)
		switch {
		case i == 0 && pg.variant == variantNav:
			dst = append(dst, "front page"...)
		case i == 0:
			dst = append(dst, "home"...)
		default:
			// Anchor text is the target's, whichever article links it.
			ar := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 1+3*uint64(len(h.pages))+uint64(l.to.p))
			dst = w.text.appendWords(dst, &ar, ar.between(1, 3))
		}
		dst = append(dst, "</a> "...)
	}
	dst = append(dst, "</nav>\n<article>\n<h1>"...)
	dst = append(dst, title...)
	dst = append(dst, "</h1>\n<p class=\"dateline\">Published "...)
	dst = appendDate(dst, &sr)
	dst = append(dst, "</p>\n"...)
	if h.image >= 0 {
		dst = append(dst, `<img src="`...)
		dst = appendEscapedPath(dst, h.pages[h.image].path)
		dst = append(dst, "\" alt=\"a photograph\">\n"...)
	}
	if pg.variant == variantUpdated {
		dst = append(dst, "<p class=\"dateline\">Updated "...)
		dst = appendDate(dst, &vr)
		dst = append(dst, " at "...)
		dst = strconv.AppendInt(dst, int64(vr.intn(24)), 10)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(10+vr.intn(50)), 10)
		dst = append(dst, "</p>\n"...)
	}
	words := sr.between(minArticleWords, maxArticleWords)
	para := func(n int) {
		dst = append(dst, "<p>"...)
		dst = w.text.appendWords(dst, &sr, n)
		dst = append(dst, ".</p>\n"...)
	}
	// Paragraph lengths are drawn the same in every variant, so that the
	// story's words are too; the ad splits the paragraph it falls in.
	for written := 0; written < words; {
		n := min(words-written, sr.between(40, 120))
		if ad := words / 2; pg.variant == variantAd && ad >= written && ad < written+n {
			if ad > written {
				para(ad - written)
			}
			dst = append(dst, "<div class=\"ad\"><p>Advertisement: "...)
			dst = w.text.appendWords(dst, &vr, 25)
			dst = append(dst, "</p></div>\n"...)
			para(written + n - ad)
		} else {
			para(n)
		}
		written += n
	}
	dst = append(dst, "</article>\n<footer><p>"...)
	dst = w.text.appendWords(dst, &fr, 20)
	if pg.variant == variantFooter {
		dst = append(dst, ' ')
		dst = w.text.appendWords(dst, &vr, 12)
	}
	return append(dst, "</p></footer>\n</body>\n</html>\n"...)
}

var months = [12]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// appendDate appends a date such as "7 March 2026".
func appendDate(dst []byte, r *rng) []byte {
	dst = strconv.AppendInt(dst, int64(1+r.intn(28)), 10)
	dst = append(dst, ' ')
	dst = append(dst, months[r.intn(12)]...)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(2020+r.intn(7)), 10)
}
