package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The WordPress blog: "/" and its pages lead to every post, each post
// links its variants, a reply link's page is the post but for its reply
// form, the print view is the post's page, a share button redirects off
// the blog, and a month archive lists its ten posts.
func TestWordPress(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, WordPress)
	links := func(page string) []string {
		var ls []string
		for _, l := range strings.Split(page, `href="`)[1:] {
			ls = append(ls, strings.ReplaceAll(l[:strings.IndexByte(l, '"')], "&amp;", "&"))
		}
		return ls
	}
	posts, listed := map[string]bool{}, map[string]bool{}
	for next := "/"; next != ""; {
		page := body(next)
		listed[next], next = true, ""
		for _, l := range links(page) {
			switch {
			case strings.Contains(l, "-and-"):
				posts[l] = true
			case strings.HasPrefix(l, "/page/") && !listed[l]:
				next = l
			}
		}
	}
	if len(posts) != WordPressPosts || !posts[WordPressPost(0)] || !posts[WordPressPost(WordPressPosts-1)] {
		t.Errorf("the listings lead to %d posts, want %d", len(posts), WordPressPosts)
	}
	post := WordPressPost(17)
	page := body(post)
	variants := map[string]int{}
	for _, l := range links(page) {
		if p, q, ok := strings.Cut(l, "?"); ok && p == post {
			name, _, _ := strings.Cut(q, "=")
			variants[name]++
		}
	}
	if variants["replytocom"] != wpComments(17) || variants["share"] != 3 || variants["amp"] != 1 || variants["print"] != 1 {
		t.Errorf("post 17 links variants %v", variants)
	}
	reply := body(post + "?replytocom=171")
	if reply == page || !strings.Contains(reply, "Leave a Reply to comment 171") ||
		strings.Replace(reply, reply[strings.Index(reply, `<div id="respond">`):strings.Index(reply, "</body>")], "", 1) !=
			strings.Replace(page, page[strings.Index(page, `<div id="respond">`):strings.Index(page, "</body>")], "", 1) {
		t.Errorf("a reply link's page is not the post with its form moved")
	}
	if body(post+"?print=1") != page {
		t.Errorf("the print view is not the post's page")
	}
	r := get(t, c, site+post+"?share=linkedin")
	if loc := r.header.Get("Location"); r.status != http.StatusFound || !strings.HasPrefix(loc, "http://127.0.0.4:9/") {
		t.Errorf("share: %d to %q", r.status, loc)
	}
	month := 0
	for _, l := range links(body(wpMonth(17))) {
		if strings.Contains(l, "-and-") && strings.HasPrefix(l, wpMonth(17)) {
			month++
		}
	}
	if month != 10 {
		t.Errorf("%s lists %d of its posts, want 10", wpMonth(17), month)
	}
	// What the head links for programs: the post as data, and its
	// shortlink, a redirect to it.
	for _, want := range []string{`type="application/json" title="JSON" href="` + site + `/wp-json/wp/v2/posts/18"`,
		`type="application/json+oembed"`, `type="text/xml+oembed"`, `rel="EditURI"`, `href="` + site + post + `feed/"`} {
		if !strings.Contains(page, want) {
			t.Errorf("post 17's head lacks %s", want)
		}
	}
	if r := get(t, c, site+"/?p=18"); r.status != http.StatusMovedPermanently || r.header.Get("Location") != post {
		t.Errorf("shortlink: %d to %q", r.status, r.header.Get("Location"))
	}
	if b := body("/wp-json/oembed/1.0/embed?url=x&format=xml"); !strings.Contains(b, "<oembed>") {
		t.Errorf("oEmbed XML: %q", b)
	}
	if r := get(t, c, site+"/2026/13/none/"); r.status != http.StatusNotFound {
		t.Errorf("an unknown path: %d", r.status)
	}
}
