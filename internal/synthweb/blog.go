package synthweb

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// WorldBlog is a web of blogs, one per ordinary host, shaped as the
// families of URLs a crawl-trap budget weighs are on an ordinary site:
// pagination in the query, dated paths, a dated archive, comment links.
// Each blog has PagesPerHost posts (zero means 30), two a day back from
// 30 November 2026, newest first:
//
//   - "/" lists posts 0 to 9 and links "/?page=2"; "/?page=N" lists
//     the next ten and links the pages before and after it;
//   - post k is /YYYY/MM/DD/slug-words-k/ and links "/", its month's
//     archive /YYYY/MM/ and the posts before and after it; one post in
//     five (k a multiple of 5) has a comment, and links its reply link
//     ?replytocom=k, the same post with a reply form (a near-duplicate,
//     as WordPress serves it; the opt-in kind WordPress, a blog whose
//     every post has several, is the test of those);
//   - the archive /YYYY/MM/ lists the month's ten newest posts (only
//     the listing reaches them all) and links the months before and
//     after it that have any.
//
// With Config.BlogPlainLinks, the same blog is linked as WordPress's
// default permalinks link it: /?p=k, /?m=YYYYMM, /?p=k&replytocom=k.
//
// Every page's text is drawn for its host and path, so no two pages are
// near-duplicates but a post and its comment link. Of the other fields,
// WorldBlog reads Seed, Hosts, PagesPerHost, MaxLatency, CrawlDelay,
// RobotsKinds, the hostile hosts, Domain, IPPrefix and IPAuthorities; it
// has no sitemap.
const WorldBlog World = "blog"

// blogPerPage is the posts a page of the blog's listing shows; one post in
// blogCommented has a comment.
const (
	blogPerPage   = 10
	blogCommented = 5
)

// blogLast is the day of the newest post.
var blogLast = time.Date(2026, time.November, 30, 0, 0, 0, 0, time.UTC)

// blogDay is the day post k was published.
func blogDay(k int) time.Time { return blogLast.AddDate(0, 0, -k/2) }

// blogPostPath is the path of post k of host h, as its links write it
// (Config.BlogPlainLinks).
func (w *Web) blogPostPath(h, k int) string {
	if w.cfg.BlogPlainLinks {
		return "/?p=" + strconv.Itoa(k)
	}
	return w.blogPrettyPath(h, k)
}

// blogPrettyPath is the dated path of post k of host h.
func (w *Web) blogPrettyPath(h, k int) string {
	r := newRNG(w.cfg.Seed, streamPaths, uint64(h), uint64(k))
	b := blogDay(k).AppendFormat(make([]byte, 0, 64), "/2006/01/02/")
	for range r.between(2, 4) {
		b = append(b, w.text.words[r.intn(len(w.text.words))]...)
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, int64(k), 10)
	return string(append(b, '/'))
}

// blogListPath is the path of page n (from 1) of the blog's listing.
func blogListPath(n int) string {
	if n == 1 {
		return "/"
	}
	return "/?page=" + strconv.Itoa(n)
}

// blogMonthPath is the path of the archive of t's month, as its links
// write it.
func (w *Web) blogMonthPath(t time.Time) string {
	if w.cfg.BlogPlainLinks {
		return t.Format("/?m=200601")
	}
	return t.Format("/2006/01/")
}

// blogUnplain reads a plain link (Config.BlogPlainLinks) as the dated
// path and query it stands for: /?p=12 as post 12's path, /?m=202611 as
// /2026/11/, /?p=10&replytocom=10 as post 10's path and replytocom=10;
// anything else but the listing's pages as a path nothing answers.
func (w *Web) blogUnplain(h int, query string) (string, string) {
	const none = "/none"
	q, err := url.ParseQuery(query)
	switch {
	case err != nil:
		return none, ""
	case q.Has("p"):
		v := q.Get("p")
		k, err := strconv.Atoi(v)
		if err != nil || strconv.Itoa(k) != v || k < 0 || k >= w.cfg.PagesPerHost || len(q) > 2 || len(q) == 2 && !q.Has("replytocom") {
			return none, ""
		}
		if q.Has("replytocom") {
			return w.blogPrettyPath(h, k), "replytocom=" + q.Get("replytocom")
		}
		return w.blogPrettyPath(h, k), ""
	case q.Has("m"):
		t, err := time.Parse("200601", q.Get("m"))
		if err != nil || len(q) != 1 {
			return none, ""
		}
		return t.Format("/2006/01/"), ""
	}
	return "/", query
}

// serveBlog answers a request of a WorldBlog host (robots.txt aside).
func (w *Web) serveBlog(rw *logWriter, r *http.Request, h *host) {
	posts := w.cfg.PagesPerHost
	path, query := r.URL.Path, r.URL.RawQuery
	if w.cfg.BlogPlainLinks {
		if path != "/" {
			writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
			return
		}
		path, query = w.blogUnplain(h.idx, query)
	}
	page := func(key, title string, links []string) {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, h.name+key, title, trapWords, links))
	}
	posts10 := func(first, end int) []string {
		var links []string
		for k := first; k < min(end, posts); k++ {
			links = append(links, w.blogPostPath(h.idx, k))
		}
		return links
	}
	switch {
	case path == "/":
		n := 1
		if query != "" {
			v, ok := strings.CutPrefix(query, "page=")
			var err error
			if n, err = strconv.Atoi(v); !ok || err != nil || n < 2 || blogListPath(n) != "/?"+query {
				break
			}
		}
		if (n-1)*blogPerPage >= posts {
			break
		}
		links := posts10((n-1)*blogPerPage, n*blogPerPage)
		if n > 1 {
			links = append(links, blogListPath(n-1))
		}
		if n*blogPerPage < posts {
			links = append(links, blogListPath(n+1))
		}
		page(blogListPath(n), "Posts, page "+strconv.Itoa(n), links)
		return
	case len(path) == len("/2026/11/"):
		t, err := time.Parse("/2006/01/", path)
		if err != nil || query != "" {
			break
		}
		first := 2 * int(blogLast.Sub(t.AddDate(0, 1, -1)).Hours()/24) // the month's last day's first post
		last := 2*int(blogLast.Sub(t).Hours()/24) + 1
		if first < 0 {
			first = 0
		}
		if last < 0 || first >= posts {
			break
		}
		links := posts10(first, min(last+1, first+blogPerPage))
		if next := t.AddDate(0, 1, 0); !next.After(blogLast) {
			links = append(links, w.blogMonthPath(next))
		}
		if last+1 < posts {
			links = append(links, w.blogMonthPath(t.AddDate(0, -1, 0)))
		}
		page(path, t.Format("January 2006"), links)
		return
	default:
		i := strings.LastIndexByte(strings.TrimSuffix(path, "/"), '-')
		k, err := strconv.Atoi(strings.TrimSuffix(path[i+1:], "/"))
		if i < 0 || err != nil || k < 0 || k >= posts || path != w.blogPrettyPath(h.idx, k) {
			break
		}
		links := []string{"/", w.blogMonthPath(blogDay(k))}
		if k%blogCommented == 0 {
			sep := "?"
			if w.cfg.BlogPlainLinks {
				sep = "&"
			}
			links = append(links, w.blogPostPath(h.idx, k)+sep+"replytocom="+strconv.Itoa(k))
		}
		if k > 0 {
			links = append(links, w.blogPostPath(h.idx, k-1))
		}
		if k+1 < posts {
			links = append(links, w.blogPostPath(h.idx, k+1))
		}
		title := "Post " + strconv.Itoa(k)
		switch {
		case query == "replytocom="+strconv.Itoa(k) && k%blogCommented == 0:
			title += ": reply to a comment"
		case query != "":
			writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
			return
		}
		page(path, title, links)
		return
	}
	writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
}
