package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The wiki: its main page and the articles' links lead to every article;
// an article links its ten tools; its permanent link and printable view
// are the article again; its edit view and the special pages say
// noindex,nofollow; the login form is one whatever it comes back to.
func TestMediaWiki(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, MediaWiki)
	if r := get(t, c, site+"/"); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/wiki/Main_Page" {
		t.Fatalf("/: %d to %q", r.status, r.header.Get("Location"))
	}
	articles := map[string]bool{}
	queue := []string{"/wiki/Main_Page"}
	for len(queue) > 0 {
		page := body(queue[0])
		queue = queue[1:]
		for _, l := range hrefs([]byte(page)) {
			if rest, ok := strings.CutPrefix(l, "/wiki/"); ok && !strings.Contains(rest, ":") && rest != "Main_Page" && !articles[l] {
				articles[l] = true
				queue = append(queue, l)
			}
		}
	}
	if len(articles) != MediaWikiArticles {
		t.Errorf("the links lead to %d articles, want %d", len(articles), MediaWikiArticles)
	}
	title := MediaWikiArticle(17)
	art := body("/wiki/" + title)
	tools := 0
	for _, l := range hrefs([]byte(art)) {
		if strings.HasPrefix(l, "/w/index.php") || strings.HasPrefix(l, "/wiki/Special:") && strings.HasSuffix(l, "/"+title) {
			tools++
		}
	}
	if tools < 10 {
		t.Errorf("%s links %d tools, want 10", title, tools)
	}
	if !strings.Contains(art, `type="application/x-wiki"`) || strings.Contains(art, "noindex") {
		t.Errorf("an article's head: want its source as an alternate, and no robots directive")
	}
	if body("/w/index.php?title="+title+"&oldid=4629") != art || body("/w/index.php?title="+title+"&printable=yes") != art {
		t.Errorf("the permanent link or the printable view is not the article")
	}
	for _, p := range []string{"/w/index.php?title=" + title + "&action=edit", "/w/index.php?title=" + title + "&action=history",
		"/wiki/Special:WhatLinksHere/" + title, "/w/index.php?title=Talk:" + title + "&action=edit&redlink=1"} {
		if !strings.Contains(body(p), `<meta name="robots" content="noindex,nofollow">`) {
			t.Errorf("%s does not say noindex,nofollow", p)
		}
	}
	if body("/w/index.php?title=Special:UserLogin&returnto=A") != body("/w/index.php?title=Special:UserLogin&returnto=B") {
		t.Error("the login form differs with where it comes back to")
	}
	if r := get(t, c, site+"/robots.txt"); r.status != http.StatusNotFound {
		t.Errorf("robots.txt: %d, want none", r.status)
	}
}
