package synthweb

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MediaWiki is a wiki as MediaWiki serves one with its short URLs:
// MediaWikiArticles articles at /wiki/Title under titles of words, each
// linking eight others; and every page's sidebar (the main page, recent
// changes, a random article, help, the special pages, an upload form).
// Every article links its tools, as MediaWiki's default skin writes
// them:
//
//   - under /w/index.php, its source for editors (?action=edit, also in
//     its head as an alternate of type application/x-wiki), its history,
//     its information, its permanent link (?oldid=N, the article again),
//     its printable view (?printable=yes, the article again), its
//     citation (Special:CiteThisPage), the login form that comes back to
//     it (Special:UserLogin&returnto=, the same form for every article),
//     and its talk page's editor (?action=edit&redlink=1: it has none);
//   - under /wiki/, what links to it and the recent changes of what it
//     links (Special:WhatLinksHere/Title, Special:RecentChangesLinked/Title).
//
// The edit, history and information views and the special pages say
// noindex,nofollow, as MediaWiki's do. Its head also links the recent
// changes' RSS and Atom feeds. There is no robots.txt (MediaWiki ships
// none). Of its URLs, the articles are worth a crawl; their tools, ten
// for each, are not.
const MediaWiki = "mediawiki"

// MediaWikiArticles is how many articles the wiki has.
const MediaWikiArticles = 144

// MediaWikiArticle returns the title of article i.
func MediaWikiArticle(i int) string {
	return strings.ToUpper(wpWords[i%12][:1]) + wpWords[i%12][1:] + "_" + wpWords[i/12%12]
}

// mwArticle returns the index of the article titled t, or false.
func mwArticle(t string) (int, bool) {
	for i := range MediaWikiArticles {
		if MediaWikiArticle(i) == t {
			return i, true
		}
	}
	return 0, false
}

// mwSidebar is what every page of the wiki links.
var mwSidebar = []string{"/wiki/Main_Page", "/wiki/Special:RecentChanges", "/wiki/Special:Random",
	"/wiki/Help:Contents", "/wiki/Special:SpecialPages", "/wiki/Special:Upload"}

// mwTools are the links to the tools of the page titled t, revision rev.
func mwTools(t string, rev int) []string {
	q := "/w/index.php?title=" + url.QueryEscape(t)
	return []string{
		q + "&action=edit", q + "&action=history", q + "&action=info",
		fmt.Sprintf("%s&oldid=%d", q, rev), q + "&printable=yes",
		"/wiki/Special:WhatLinksHere/" + t, "/wiki/Special:RecentChangesLinked/" + t,
		fmt.Sprintf("/w/index.php?title=Special:CiteThisPage&page=%s&id=%d", url.QueryEscape(t), rev),
		"/w/index.php?title=Special:UserLogin&returnto=" + url.QueryEscape(t),
		"/w/index.php?title=Talk:" + url.QueryEscape(t) + "&action=edit&redlink=1",
	}
}

// mwRevision is the last revision of article i.
func mwRevision(i int) int { return 4000 + 37*i }

// serveMediaWiki answers MediaWiki.
func (w *Web) serveMediaWiki(rw *logWriter, r *http.Request, h *host) {
	path, q := r.URL.Path, r.URL.Query()
	page := func(key, t, robots string, links []string) {
		b := string(w.smallPage(h, key, strings.ReplaceAll(t, "_", " "), trapWords, append(links, mwSidebar...)))
		head := `<link rel="alternate" type="application/x-wiki" title="Edit" href="/w/index.php?title=` + url.QueryEscape(t) + `&amp;action=edit">` + "\n" +
			`<link rel="alternate" type="application/rss+xml" title="RSS" href="/w/index.php?title=Special:RecentChanges&amp;feed=rss">` + "\n" +
			`<link rel="alternate" type="application/atom+xml" title="Atom" href="/w/index.php?title=Special:RecentChanges&amp;feed=atom">` + "\n"
		if robots != "" {
			head = `<meta name="robots" content="` + robots + `">` + "\n" + head
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, strings.Replace(b, "</head>", head+"</head>", 1))
	}
	article := func(key string, i int) {
		var links []string
		for _, d := range []int{1, 2, 3, 5, 8, 13, 21, 34} {
			links = append(links, "/wiki/"+MediaWikiArticle((i+d)%MediaWikiArticles))
		}
		page(key, MediaWikiArticle(i), "", append(links, mwTools(MediaWikiArticle(i), mwRevision(i))...))
	}
	switch {
	case path == "/":
		redirect(rw, "/wiki/Main_Page", http.StatusMovedPermanently)
	case path == "/wiki/Main_Page":
		var links []string
		for i := 0; i < MediaWikiArticles; i += 12 {
			links = append(links, "/wiki/"+MediaWikiArticle(i))
		}
		page(path, "Main_Page", "", append(links, mwTools("Main_Page", 1)...))
	case path == "/wiki/Special:Random":
		redirect(rw, "/wiki/"+MediaWikiArticle(int(hashString(r.URL.RawQuery+r.RemoteAddr)%MediaWikiArticles)), http.StatusFound)
	case path == "/wiki/Help:Contents":
		page(path, "Help:Contents", "", nil)
	case strings.HasPrefix(path, "/wiki/Special:"):
		var links []string
		if t, ok := strings.CutPrefix(path, "/wiki/Special:WhatLinksHere/"); ok {
			if i, ok := mwArticle(t); ok {
				for _, d := range []int{1, 2, 3, 5, 8, 13, 21, 34} {
					links = append(links, "/wiki/"+MediaWikiArticle((i-d+MediaWikiArticles)%MediaWikiArticles))
				}
			}
		}
		page(path, strings.TrimPrefix(path, "/wiki/"), "noindex,nofollow", links)
	case strings.HasPrefix(path, "/wiki/"):
		if i, ok := mwArticle(strings.TrimPrefix(path, "/wiki/")); ok {
			article(path, i)
			return
		}
		notFound(rw, r)
	case path == "/w/index.php" && q.Get("feed") != "":
		writeBody(rw, r, http.StatusOK, "application/rss+xml", `<?xml version="1.0"?><rss version="2.0"><channel><title>Recent changes</title></channel></rss>`)
	case path == "/w/index.php" && q.Get("title") == "Special:UserLogin":
		page("/login", "Special:UserLogin", "noindex,nofollow", nil) // one form, whatever it comes back to
	case path == "/w/index.php" && (q.Get("action") != "" || strings.HasPrefix(q.Get("title"), "Special:")):
		page(r.URL.RequestURI(), q.Get("title")+"_"+q.Get("action"), "noindex,nofollow", nil)
	case path == "/w/index.php" && (q.Get("oldid") != "" || q.Get("printable") != ""):
		if i, ok := mwArticle(q.Get("title")); ok {
			article("/wiki/"+MediaWikiArticle(i), i) // the article again
			return
		}
		notFound(rw, r)
	default:
		notFound(rw, r)
	}
}
