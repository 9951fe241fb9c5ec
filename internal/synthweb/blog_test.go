package synthweb

import (
	"strings"
	"testing"
)

// A blog is crawled whole from "/": its listing's pages, every post, the
// reply link of each commented post and the archive of each month it has
// a post in; anything else of the host answers 404. Only a post and its
// reply link share their text.
func TestBlog(t *testing.T) {
	t.Parallel()
	const posts = 75 // 38 days: 30 November back to 24 October
	w := startWeb(t, Config{Seed: 5, Hosts: 2, PagesPerHost: posts, World: WorldBlog})
	h := w.Hosts()[0]
	c := newClient(t, w)
	root := "http://" + h.Authority
	pages := map[string]string{} // URL: its text
	for queue := []string{root + "/"}; len(queue) > 0; queue = queue[1:] {
		u := queue[0]
		if _, ok := pages[u]; ok {
			continue
		}
		r := get(t, c, u)
		if r.status != 200 {
			t.Fatalf("%s: %d", u, r.status)
		}
		pages[u] = firstParagraph(r.body)
		for _, l := range resolveAll(t, u, anchorHrefs(r.body)) {
			if !strings.HasPrefix(l, root+"/") {
				t.Fatalf("%s links off the host: %s", u, l)
			}
			queue = append(queue, l)
		}
	}
	var listing, post, reply, month int
	texts := map[string]string{}
	for u, text := range pages {
		p := strings.TrimPrefix(u, root)
		switch {
		case p == "/" || strings.HasPrefix(p, "/?page="):
			listing++
		case strings.Contains(p, "?replytocom="):
			reply++
			if post, _, _ := strings.Cut(u, "?"); text != pages[post] {
				t.Errorf("%s: not the text of its post", u)
			}
			continue
		case len(p) == len("/2026/11/"):
			month++
		default:
			post++
		}
		if texts[text] != "" {
			t.Errorf("%s has the text of %s", u, texts[text])
		}
		texts[text] = u
	}
	if listing != 8 || post != posts || reply != posts/5 || month != 2 {
		t.Errorf("%d listing pages, %d posts, %d reply links, %d months; want 8, %d, %d, 2", listing, post, reply, month, posts, posts/5)
	}
	for _, p := range []string{"/2026/11/30/no-such-post-0/", "/?page=9", "/?page=02", "/2026/12/", "/2026/09/", "/?replytocom=1",
		w.blogPostPath(0, 5) + "?replytocom=4", w.blogPostPath(0, 3) + "?replytocom=3"} {
		if r := get(t, c, root+p); r.status != 404 {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
	if w.blogPostPath(0, 3) == w.blogPostPath(1, 3) {
		t.Errorf("two blogs share the path of a post: %s", w.blogPostPath(0, 3))
	}
}
