package synthweb

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Forum is a phpBB board as phpBB serves one to a visitor without an
// account: index.php lists its ForumForums forums; viewforum.php?f=F lists
// a forum's ForumTopics topics, 20 a page (&start=20), each as
// viewtopic.php?f=F&t=T, and the last page of a long one as
// viewtopic.php?f=F&t=T&start=S. A topic lists its posts ten a page; its
// pages link one another as viewtopic.php?t=T&start=S (without the
// forum), each post by its permalink viewtopic.php?p=P#pP (the topic's
// page again), a print view (&view=print: the page again), and a reply
// and a quote button per post that redirect to the login page. The
// listings' text is the board's template, the same on every forum's
// pages: they read as copies of one another, and differ only in the
// topics they link.
const Forum = "phpbb-forum"

// The board's size.
const (
	ForumForums = 6
	ForumTopics = 45 // a forum's
)

// forumPosts is the number of posts of topic t: 3 to 30.
func forumPosts(t int) int { return 3 + t*7%28 }

// forumTopic is the id of the i-th topic of forum f.
func forumTopic(f, i int) int { return f*1000 + i }

// serveForum answers Forum.
func (w *Web) serveForum(rw *logWriter, r *http.Request, h *host) {
	q := r.URL.Query()
	num := func(name string) (int, bool) {
		v := q.Get(name)
		if v == "" {
			return 0, true
		}
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 0
	}
	page := func(key, title string, links []string) {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, key, title, trapWords, links))
	}
	switch r.URL.Path {
	case "/", "/index.php":
		links := []string{"/ucp.php?mode=login", "/search.php"}
		for f := 1; f <= ForumForums; f++ {
			links = append(links, fmt.Sprintf("/viewforum.php?f=%d", f))
		}
		page("index", "Board index", links)
	case "/viewforum.php":
		f, okF := num("f")
		start, okS := num("start")
		if !okF || !okS || f < 1 || f > ForumForums || start%20 != 0 || start >= ForumTopics {
			notFound(rw, r)
			return
		}
		links := []string{"/index.php", "/ucp.php?mode=login", fmt.Sprintf("/posting.php?mode=post&f=%d", f)}
		for i := start; i < min(start+20, ForumTopics); i++ {
			t := forumTopic(f, i)
			links = append(links, fmt.Sprintf("/viewtopic.php?f=%d&t=%d", f, t))
			if n := forumPosts(t); n > 10 {
				links = append(links, fmt.Sprintf("/viewtopic.php?f=%d&t=%d&start=%d", f, t, (n-1)/10*10))
			}
		}
		if start+20 < ForumTopics {
			links = append(links, fmt.Sprintf("/viewforum.php?f=%d&start=%d", f, start+20))
		}
		// The board's template: every listing reads alike.
		page("listing", "Board", links)
	case "/viewtopic.php":
		t, okT := num("t")
		start, okS := num("start")
		if p, ok := num("p"); ok && p > 0 {
			t, start = p/100, p%100/10*10
		}
		f, n := t/1000, forumPosts(t)
		if !okT || !okS || f < 1 || f > ForumForums || t%1000 >= ForumTopics || start%10 != 0 || start >= n {
			notFound(rw, r)
			return
		}
		links := []string{"/index.php", fmt.Sprintf("/viewforum.php?f=%d", f), fmt.Sprintf("/posting.php?mode=reply&t=%d", t),
			fmt.Sprintf("/viewtopic.php?t=%d&view=print", t)}
		for k := start; k < min(start+10, n); k++ {
			p := t*100 + k
			links = append(links, fmt.Sprintf("/viewtopic.php?p=%d#p%d", p, p), fmt.Sprintf("/posting.php?mode=quote&p=%d", p))
		}
		if start > 0 {
			links = append(links, fmt.Sprintf("/viewtopic.php?t=%d&start=%d", t, start-10))
		}
		if start+10 < n {
			links = append(links, fmt.Sprintf("/viewtopic.php?t=%d&start=%d", t, start+10))
		}
		page(fmt.Sprintf("topic %d %d", t, start), fmt.Sprintf("Topic %d", t), links)
	case "/posting.php":
		redirect(rw, "/ucp.php?mode=login&redirect="+url.QueryEscape("posting.php?"+r.URL.RawQuery), http.StatusFound)
	case "/ucp.php", "/search.php":
		page("login", "Login", []string{"/index.php"})
	default:
		notFound(rw, r)
	}
}
