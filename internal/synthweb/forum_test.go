package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The phpBB board: the index leads to every forum, a forum's listings to
// every topic, each listing's text is the board's template (two forums'
// pages differ only in their links), a topic's page is the same under
// its forum's id or a post's permalink, the reply button redirects to
// the login page, and what is no page is not found.
func TestForum(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, Forum)
	text := func(page string) string { return page[:strings.Index(page, "<ul>")] }
	topics := map[string]bool{}
	for _, l := range strings.Split(body("/index.php"), `href="`)[1:] {
		l = l[:strings.IndexByte(l, '"')]
		if !strings.HasPrefix(l, "/viewforum.php") {
			continue
		}
		for next := l; next != ""; {
			page := body(strings.ReplaceAll(next, "&amp;", "&"))
			next = ""
			for _, m := range strings.Split(page, `href="`)[1:] {
				m = strings.ReplaceAll(m[:strings.IndexByte(m, '"')], "&amp;", "&")
				switch {
				case strings.HasPrefix(m, "/viewtopic.php?") && !strings.Contains(m, "start="):
					topics[m] = true
				case strings.HasPrefix(m, "/viewforum.php?") && strings.Contains(m, "start="):
					next = m
				}
			}
		}
	}
	if len(topics) != ForumForums*ForumTopics {
		t.Errorf("the listings lead to %d topics, want %d", len(topics), ForumForums*ForumTopics)
	}
	if a, b := body("/viewforum.php?f=1"), body("/viewforum.php?f=4&start=20"); text(a) != text(b) || a == b {
		t.Error("two listings: want the same text and other links")
	}
	page := body("/viewtopic.php?f=2&t=2003")
	for _, same := range []string{"/viewtopic.php?t=2003", "/viewtopic.php?t=2003&start=0", "/viewtopic.php?p=200302", "/viewtopic.php?t=2003&view=print"} {
		if body(same) != page {
			t.Errorf("%s is not the topic's page", same)
		}
	}
	if !strings.Contains(page, "/viewtopic.php?t=2003&amp;start=10") {
		t.Error("a topic of 24 posts does not link its second page")
	}
	if r := get(t, c, site+"/posting.php?mode=reply&t=2003"); r.status != http.StatusFound || !strings.HasPrefix(r.header.Get("Location"), "/ucp.php?mode=login") {
		t.Errorf("the reply button: %d to %q, want a redirect to the login page", r.status, r.header.Get("Location"))
	}
	for _, bad := range []string{"/viewforum.php?f=7", "/viewforum.php?f=1&start=60", "/viewtopic.php?t=2045", "/viewtopic.php?t=2003&start=30", "/faq.php"} {
		if r := get(t, c, site+bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, r.status)
		}
	}
}
