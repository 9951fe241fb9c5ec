package synthweb

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Newsroom is a news site whose articles name the people in them as
// links to its search, as many newspapers' sites do: "Anna Berg" under an
// article links /search?q=Anna+Berg. It has NewsroomArticles articles
// at /section/slug-N/ in five sections, each section's listing paged
// twelve to a page (/world/?page=2), the pages past the first saying
// noindex,follow, as SEO plug-ins have them say; the home page lists the
// newest and links the sections and the search form (/search). Each
// article links its section, the section's latest four (but itself),
// and four people, drawn from a thousand names, so that most of the
// people an article names no other article does. An article past a section's first
// page is linked only from its section's later pages and from searches.
//
// Every page has the search box; a search's results show what was asked
// in it, and say noindex,follow, as WordPress's do (and MediaWiki's say
// noindex,nofollow). They list the articles that name the person, link
// the same search sorted by date (&sort=date), and the other people
// those articles name ("Related"). A search for a name no article has
// finds nothing, and says so. Each article also links its print view,
// /print.php?article=N, of a module the site has since dropped (404),
// and its comments, /comments?article=N: a page for every tenth article,
// 404 for the rest, which have none. There is no robots.txt. Of its
// URLs, the articles, listings and comments are worth a crawl; the
// searches, some four for each article, are not: by the site's word
// they are no pages to index, and once the articles are found they lead
// nowhere; nor are the print views.
const Newsroom = "newsroom"

// NewsroomArticles is how many articles the news site has; every
// NewsroomCommented-th has comments.
const (
	NewsroomArticles  = 240
	NewsroomCommented = 10
)

const (
	nrPerPage = 12
	nrPeople  = 4 // people an article names
)

// nrSections are the news site's sections.
var nrSections = [...]string{"world", "business", "science", "sport", "culture"}

// nrFirst and nrLast make the people's names: 32 × 32.
var (
	nrFirst = [...]string{"Anna", "Bruno", "Clara", "David", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Karin", "Leo", "Maria", "Nils", "Olga", "Paul",
		"Rosa", "Sven", "Tina", "Umar", "Vera", "Walter", "Xenia", "Yusuf", "Zoe", "Adam", "Berit", "Carl", "Dora", "Emil", "Frida", "Gustav"}
	nrLast = [...]string{"Berg", "Lind", "Holm", "Strand", "Dahl", "Falk", "Nyberg", "Ek", "Sand", "Wolf", "Brandt", "Keller", "Roth", "Vogel", "Arnold", "Haas",
		"Jung", "Kraus", "Lang", "Moser", "Novak", "Ortiz", "Pohl", "Quint", "Reyes", "Stein", "Thiel", "Ulrich", "Vidal", "Weber", "Yilmaz", "Zander"}
)

// NewsroomArticle returns the path of article i (0 the newest).
func NewsroomArticle(i int) string {
	a, b := wpWords[i%12], wpWords[(i/12+i)%12]
	return fmt.Sprintf("/%s/%s-%s-%d/", nrSections[i%len(nrSections)], a, b, i)
}

// nrArticle returns the index of the article at path, or false.
func nrArticle(path string) (int, bool) {
	slug := strings.TrimSuffix(path, "/")
	i, err := strconv.Atoi(slug[strings.LastIndexByte(slug, '-')+1:])
	if err != nil || i < 0 || i >= NewsroomArticles || NewsroomArticle(i) != path {
		return 0, false
	}
	return i, true
}

// nrName is the name of person n of 1,024.
func nrName(n int) string { return nrFirst[n%32] + " " + nrLast[n/32%32] }

// nrNamed are the people article i names.
func nrNamed(i int) [nrPeople]string {
	var names [nrPeople]string
	for k := range names {
		names[k] = nrName(int(hashString(fmt.Sprintf("%d/%d", i, k)) % 1024))
	}
	return names
}

// nrSearch is the path and query of the search for name.
func nrSearch(name string) string { return "/search?q=" + url.QueryEscape(name) }

// nrMenu is what every page of the news site links.
func nrMenu() []string {
	links := []string{"/"}
	for _, s := range nrSections {
		links = append(links, "/"+s+"/")
	}
	return append(links, "/search")
}

// serveNewsroom answers Newsroom.
func (w *Web) serveNewsroom(rw *logWriter, r *http.Request, h *host) {
	path, q := r.URL.Path, r.URL.Query()
	page := func(key, title, robots string, links []string) {
		b := string(w.smallPage(h, key, title, trapWords, append(links, nrMenu()...)))
		if robots != "" {
			b = strings.Replace(b, "</head>", `<meta name="robots" content="`+robots+`">`+"\n</head>", 1)
		}
		// The search box, which a search's results fill in with what was
		// asked.
		box := `<form action="/search" role="search"><input type="search" name="q" value="` + html.EscapeString(q.Get("q")) +
			`" placeholder="Search"><button>Search</button></form>`
		writeBody(rw, r, http.StatusOK, htmlUTF8, strings.Replace(b, "<body>\n", "<body>\n"+box+"\n", 1))
	}
	listing := func(key, title string, in []int, n int, next string) {
		var links []string
		for _, i := range in[min(n*nrPerPage, len(in)):min((n+1)*nrPerPage, len(in))] {
			links = append(links, NewsroomArticle(i))
		}
		if next != "" && (n+1)*nrPerPage < len(in) {
			links = append(links, fmt.Sprintf("%s?page=%d", next, n+2))
		}
		robots := ""
		if n > 0 {
			robots = "noindex,follow" // as SEO plug-ins say of pages past the first
		}
		page(key, title, robots, links)
	}
	switch section := strings.Trim(path, "/"); {
	case path == robotsPath:
		notFound(rw, r)
	case path == "/" && r.URL.RawQuery == "":
		all := make([]int, NewsroomArticles)
		for i := range all {
			all[i] = i
		}
		listing(path, "News", all, 0, "")
	case path == "/search" && !q.Has("q"):
		page(path, "Search", "noindex,follow", nil) // the form
	case path == "/search":
		name := q.Get("q")
		var found []int
		var related []string
		for i := range NewsroomArticles {
			named := nrNamed(i)
			if !slices.Contains(named[:], name) {
				continue
			}
			found = append(found, i)
			for _, o := range named {
				if o != name && !slices.Contains(related, o) {
					related = append(related, o)
				}
			}
		}
		var links []string
		for _, i := range found {
			links = append(links, NewsroomArticle(i))
		}
		if q.Get("sort") == "" {
			links = append(links, nrSearch(name)+"&sort=date")
		}
		for _, o := range related {
			links = append(links, nrSearch(o))
		}
		title := fmt.Sprintf("%d results for %s", len(found), name)
		if len(found) == 0 {
			title = "No results for " + name
		}
		page(r.URL.RequestURI(), title, "noindex,follow", links)
	case path == "/comments":
		i, err := strconv.Atoi(q.Get("article"))
		if err != nil || i < 0 || i >= NewsroomArticles || i%NewsroomCommented != 0 {
			notFound(rw, r) // no comments: no page
			return
		}
		page(r.URL.RequestURI(), "Comments on "+strings.Trim(NewsroomArticle(i), "/"), "", []string{NewsroomArticle(i)})
	case slices.Contains(nrSections[:], section):
		n, _ := strconv.Atoi(q.Get("page"))
		var in []int
		for i := range NewsroomArticles {
			if nrSections[i%len(nrSections)] == section {
				in = append(in, i)
			}
		}
		if n < 1 || (n-1)*nrPerPage >= len(in) {
			if q.Has("page") {
				notFound(rw, r)
				return
			}
			n = 1
		}
		listing(r.URL.RequestURI(), section, in, n-1, path)
	default:
		i, ok := nrArticle(path)
		if !ok {
			notFound(rw, r)
			return
		}
		links := []string{"/" + nrSections[i%len(nrSections)] + "/"}
		for j := i % len(nrSections); j < 4*len(nrSections); j += len(nrSections) { // the section's latest
			if j != i {
				links = append(links, NewsroomArticle(j))
			}
		}
		for _, name := range nrNamed(i) {
			links = append(links, nrSearch(name))
		}
		links = append(links, fmt.Sprintf("/print.php?article=%d", i), fmt.Sprintf("/comments?article=%d", i))
		page(path, strings.Trim(path, "/"), "", links)
	}
}
