package synthweb

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// WordPress is a blog as WordPress serves one with its "month and name"
// permalinks: WordPressPosts posts, each at /YYYY/MM/slug/ under a slug of
// words (so that no two posts share a URL pattern), newest first on "/"
// and /page/N/, wpPerPage a page, and in month archives (/YYYY/MM/),
// wpCategories categories and wpTags tags (/category/NAME/,
// /tag/NAME/, paginated alike). Every page has the blog's menu: its
// categories, its tags and its last twelve months. A post is a page of
// its own text linking the posts before and after it, its category, one or
// two tags. Every page's head links, as WordPress writes it, the blog's
// feeds and its REST API's root (rel="https://api.w.org/"), its RSD file
// (rel="EditURI", /xmlrpc.php?rsd) and, for a post, its comments feed
// (/YYYY/MM/slug/feed/, RSS), its shortlink (/?p=ID, a 301 to the post),
// its JSON in the REST API (/wp-json/wp/v2/posts/ID) and its oEmbed
// JSON and XML (/wp-json/oembed/1.0/embed?url=POST), these three as
// rel="alternate"; a listing of a category, that category's feed and
// JSON. Under a post, as WordPress and its common plug-ins write them,
// are a post's variants:
//
//   - a "Reply" link for each of its 3 to 8 comments, ?replytocom=N: the
//     post again, the reply form moved under the comment (a
//     near-duplicate);
//   - its AMP view, ?amp=1, the post's text in other markup (a
//     near-duplicate), and its print view, ?print=1 (a copy);
//   - share buttons, ?share=twitter, facebook and linkedin, each a 302 to
//     a host of its own outside the blog (loopback addresses no test
//     serves, port 9).
//
// Of its URLs, the posts, the listings and the feeds are worth a crawl;
// the variants, more than nine a post, are not, nor is what the REST API,
// oEmbed and RSD serve programs: the page again, as data.
const WordPress = "wordpress"

// The blog's size.
const (
	WordPressPosts = 240
	wpPerPage      = 10
	wpCategories   = 5
	wpTags         = 12
)

// wpWords make the blog's slugs, category and tag names.
var wpWords = [...]string{"garden", "lamp", "winter", "coat", "river", "stone", "bread", "market", "letter", "summer", "quiet", "window"}

// WordPressPost returns the path of post i (0 the oldest).
func WordPressPost(i int) string {
	a, b, c := wpWords[i%12], wpWords[i/12%12], wpWords[(i*7+i/5)%12]
	return fmt.Sprintf("%s%s-%s-and-%s/", wpMonth(i), a, b, c)
}

// wpMonth is the month archive of post i: ten posts a month, the newest
// in December 2026.
func wpMonth(i int) string {
	m := (WordPressPosts - 1 - i) / 10 // months before the newest
	return fmt.Sprintf("/%d/%02d/", 2026-m/12, 12-m%12)
}

// wpComments is how many comments post i has.
func wpComments(i int) int { return 3 + i*5%6 }

// wpShares are the share buttons' networks and where each redirects.
var wpShares = [...][2]string{{"twitter", "http://127.0.0.2:9/intent?url="}, {"facebook", "http://127.0.0.3:9/sharer?u="}, {"linkedin", "http://127.0.0.4:9/share?url="}}

// wpMenu is what every page of the blog links.
func wpMenu() []string {
	links := []string{"/", "/feed/"}
	for c := range wpCategories {
		links = append(links, "/category/"+wpWords[c]+"/")
	}
	for t := range wpTags {
		links = append(links, "/tag/"+wpWords[t]+"-"+wpWords[(t+5)%12]+"/")
	}
	for m := range 12 {
		links = append(links, wpMonth(WordPressPosts-1-10*m))
	}
	return links
}

// wpHead is what WordPress writes in the head of the page at path of the
// blog at site (scheme and host): post is the post's index, or -1 for a
// listing.
func wpHead(site, path string, post int) string {
	var b strings.Builder
	alt := func(typ, title, href string) {
		fmt.Fprintf(&b, "<link rel=\"alternate\" type=\"%s\" title=\"%s\" href=\"%s%s\" />\n", typ, title, site, href)
	}
	alt("application/rss+xml", "Blog &raquo; Feed", "/feed/")
	alt("application/rss+xml", "Blog &raquo; Comments Feed", "/comments/feed/")
	if post >= 0 {
		alt("application/rss+xml", "Blog &raquo; Post Comments Feed", path+"feed/")
	}
	for c := range wpCategories {
		if base := "/category/" + wpWords[c] + "/"; post < 0 && strings.HasPrefix(path, base) {
			alt("application/rss+xml", "Blog &raquo; Category Feed", base+"feed/")
			alt("application/json", "JSON", fmt.Sprintf("/wp-json/wp/v2/categories/%d", c+1))
		}
	}
	fmt.Fprintf(&b, "<link rel=\"https://api.w.org/\" href=\"%s/wp-json/\" />\n", site)
	if post >= 0 {
		alt("application/json", "JSON", fmt.Sprintf("/wp-json/wp/v2/posts/%d", post+1))
	}
	fmt.Fprintf(&b, "<link rel=\"EditURI\" type=\"application/rsd+xml\" title=\"RSD\" href=\"%s/xmlrpc.php?rsd\" />\n", site)
	if post >= 0 {
		fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s%s\" />\n<link rel='shortlink' href='%s/?p=%d' />\n", site, path, site, post+1)
		embed := "/wp-json/oembed/1.0/embed?url=" + url.QueryEscape(site+path)
		alt("application/json+oembed", "oEmbed (JSON)", embed)
		alt("text/xml+oembed", "oEmbed (XML)", embed+"&#038;format=xml")
	}
	return b.String()
}

// serveWordPressAPI answers what the blog serves programs: its REST
// API's JSON, oEmbed and RSD, and a shortlink's redirect. It reports
// whether path and q were one of them.
func serveWordPressAPI(rw *logWriter, r *http.Request, path string, q url.Values) bool {
	switch {
	case path == "/" && q.Get("p") != "":
		n, err := strconv.Atoi(q.Get("p"))
		if err != nil || n < 1 || n > WordPressPosts {
			notFound(rw, r)
		} else {
			redirect(rw, WordPressPost(n-1), http.StatusMovedPermanently)
		}
	case path == "/xmlrpc.php" && q.Has("rsd"):
		writeBody(rw, r, http.StatusOK, "text/xml", `<?xml version="1.0"?><rsd version="1.0"><service><engineName>WordPress</engineName></service></rsd>`)
	case path == "/wp-json/oembed/1.0/embed" && q.Get("url") != "":
		if q.Get("format") == "xml" {
			writeBody(rw, r, http.StatusOK, "text/xml", `<?xml version="1.0"?><oembed><type>rich</type><url>`+q.Get("url")+`</url></oembed>`)
		} else {
			writeBody(rw, r, http.StatusOK, "application/json", `{"type":"rich","url":"`+q.Get("url")+`"}`)
		}
	case strings.HasPrefix(path, "/wp-json/"):
		writeBody(rw, r, http.StatusOK, "application/json", `{"route":"`+path+`"}`)
	default:
		return false
	}
	return true
}

// wpListing is a paginated listing at base (/, /category/NAME/, ...) of
// the posts in (newest first): its page's links, or false when rest (the
// path after base) names no page of it.
func wpListing(base, rest string, in func(int) bool) ([]string, bool) {
	page := 1
	if rest != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest, "page/"), "/"))
		if err != nil || n < 2 || rest != "page/"+strconv.Itoa(n)+"/" {
			return nil, false
		}
		page = n
	}
	var posts []string
	for i := WordPressPosts - 1; i >= 0; i-- {
		if in(i) {
			posts = append(posts, WordPressPost(i))
		}
	}
	lo := (page - 1) * wpPerPage
	if lo >= len(posts) {
		return nil, false
	}
	links := append(wpMenu(), posts[lo:min(lo+wpPerPage, len(posts))]...)
	if page > 1 {
		links = append(links, fmt.Sprintf("%spage/%d/", base, page-1))
	}
	if lo+wpPerPage < len(posts) {
		links = append(links, fmt.Sprintf("%spage/%d/", base, page+1))
	}
	return links, true
}

// serveWordPress answers WordPress.
func (w *Web) serveWordPress(rw *logWriter, r *http.Request, h *host) {
	path, q := r.URL.Path, r.URL.Query()
	listing := func(base string, in func(int) bool) bool {
		rest, ok := strings.CutPrefix(path, base)
		if !ok {
			return false
		}
		links, ok := wpListing(base, rest, in)
		if ok {
			page := string(w.smallPage(h, path, "Blog "+path, trapWords, links))
			writeBody(rw, r, http.StatusOK, htmlUTF8, strings.Replace(page, "</head>", wpHead("http://"+r.Host, path, -1)+"</head>", 1))
		}
		return ok
	}
	if serveWordPressAPI(rw, r, path, q) {
		return
	}
	switch {
	case path == robotsPath:
		writeBody(rw, r, http.StatusOK, "text/plain", "User-agent: *\nDisallow: /wp-admin/\n")
		return
	case strings.HasSuffix(path, "/feed/"):
		writeBody(rw, r, http.StatusOK, "application/rss+xml", `<?xml version="1.0"?><rss version="2.0"><channel><title>`+path+`</title></channel></rss>`)
		return
	case path == "/" || strings.HasPrefix(path, "/page/"):
		if listing("/", func(int) bool { return true }) {
			return
		}
	case strings.HasPrefix(path, "/category/"):
		for c := range wpCategories {
			if listing("/category/"+wpWords[c]+"/", func(i int) bool { return i%wpCategories == c }) {
				return
			}
		}
	case strings.HasPrefix(path, "/tag/"):
		for t := range wpTags {
			if listing("/tag/"+wpWords[t]+"-"+wpWords[(t+5)%12]+"/", func(i int) bool { return i%wpTags == t || i*7%wpTags == t }) {
				return
			}
		}
	}
	for i := range WordPressPosts {
		post := WordPressPost(i)
		switch {
		case path == post:
			w.serveWordPressPost(rw, r, h, i, q)
			return
		case path == wpMonth(i) && i%10 == 0:
			if listing(path, func(j int) bool { return wpMonth(j) == path }) {
				return
			}
		}
	}
	notFound(rw, r)
}

// serveWordPressPost answers post i, or one of its variants (q).
func (w *Web) serveWordPressPost(rw *logWriter, r *http.Request, h *host, i int, q url.Values) {
	post := WordPressPost(i)
	if s := q.Get("share"); s != "" {
		for _, b := range wpShares {
			if b[0] == s {
				redirect(rw, b[1]+url.QueryEscape("http://"+r.Host+post), http.StatusFound)
				return
			}
		}
	}
	links := wpMenu()
	if i > 0 {
		links = append(links, WordPressPost(i-1))
	}
	if i < WordPressPosts-1 {
		links = append(links, WordPressPost(i+1))
	}
	links = append(links, "/category/"+wpWords[i%wpCategories]+"/", post+"?amp=1", post+"?print=1")
	for t := range wpTags {
		if i%wpTags == t || i*7%wpTags == t {
			links = append(links, "/tag/"+wpWords[t]+"-"+wpWords[(t+5)%12]+"/")
		}
	}
	for _, b := range wpShares {
		links = append(links, post+"?share="+b[0])
	}
	for c := range wpComments(i) {
		links = append(links, fmt.Sprintf("%s?replytocom=%d#respond", post, i*10+c))
	}
	page := string(w.smallPage(h, post, fmt.Sprintf("Post %d", i), 2*trapWords, links))
	form := `<div id="respond"><h3>Leave a Reply</h3><form method="post" action="/wp-comments-post.php"><textarea name="comment"></textarea></form></div>`
	switch {
	case q.Get("replytocom") != "":
		form = `<div id="respond"><h3>Leave a Reply to comment ` + q.Get("replytocom") + ` <a href="` + post + `#respond">Cancel reply</a></h3><form method="post" action="/wp-comments-post.php"><textarea name="comment"></textarea></form></div>`
	case q.Get("amp") != "":
		form = `<amp-analytics type="gtag"></amp-analytics>`
	}
	page = strings.Replace(page, "</head>", wpHead("http://"+r.Host, post, i)+"</head>", 1)
	writeBody(rw, r, http.StatusOK, htmlUTF8, strings.Replace(page, "</body>", form+"\n</body>", 1))
}
