package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

// A parameter is learnt inert from three pairs of pages whose URLs differ
// in its value alone and that are the same page modulo the parameter
// (words, links to their host with it dropped, other links and embeds as
// they are), of two different pages at least; a pair that differs keeps
// it from being learnt, or unlearns it. Only a learnt parameter is
// stripped, and only on its host.
func TestObserveParams(t *testing.T) {
	parse := urlParser(t)
	var j *Judge
	// observe takes a page at raw of words text whose links to its host
	// carry the visit of its own URL, as a session id does, with the
	// embeds given.
	observe := func(raw string, text uint64, embeds ...string) {
		u := parse(raw)
		visit := ""
		if v, ok := paramValue(u.Query, "visit"); ok {
			visit = "?visit=" + v
		}
		links := []string{"http://" + u.Authority + "/home" + visit, "http://" + u.Authority + "/about" + visit, "http://other.test/x"}
		j.ObserveParams(&Page{URL: u, Text: text, Words: 100, Links: links, Embeds: embeds})
	}
	strip := func(raw string) string {
		got, _ := j.WithoutInertParams(parse(raw))
		return got.String
	}

	j = New(Config{})
	// A search page, a login wall, a soft 404: one page whatever the
	// query, on one path or two, teaches nothing.
	for _, q := range []string{"a", "b", "c", "d", "e"} {
		observe("http://a.test/search?q="+q, 1)
		observe("http://a.test/members/view?id="+q, 2)
		observe("http://a.test/members/edit?id="+q, 2)
	}
	// Pages that differ in two parameters are no pair.
	observe("http://a.test/x?id=1&visit=1", 3)
	observe("http://a.test/x?id=2&visit=2", 3)
	// Two pairs, of two pages.
	observe("http://a.test/index.php?id=7&visit=1", 10)
	observe("http://a.test/index.php?id=7&visit=2", 10)
	observe("http://a.test/index.php?id=8&visit=3", 20)
	observe("http://a.test/index.php?id=8&visit=4", 20)
	if got := strip("http://a.test/p3?visit=5"); got != "http://a.test/p3?visit=5" || inertHosts(j) != 0 {
		t.Errorf("two pairs: %s, %d hosts; want nothing learnt yet", got, inertHosts(j))
	}
	observe("http://a.test/index.php?id=7&visit=9", 10)
	for in, want := range map[string]string{
		"http://a.test/p3?visit=5":        "http://a.test/p3",
		"http://a.test/p3?id=7&visit=5":   "http://a.test/p3?id=7",
		"http://a.test/p3?id=7":           "http://a.test/p3?id=7",
		"http://b.test/p3?visit=5":        "http://b.test/p3?visit=5",
		"http://a.test/search?q=a":        "http://a.test/search?q=a",
		"http://a.test/members/view?id=a": "http://a.test/members/view?id=a",
	} {
		if got := strip(in); got != want {
			t.Errorf("learnt: %s became %s; want %s", in, got, want)
		}
	}
	if _, named := j.InertParams(10); len(named) != 1 || named[0] != "a.test: visit" {
		t.Errorf("named %v; want a.test's visit", named)
	}
	// A pair that differs unlearns it.
	observe("http://a.test/p8?visit=1", 30)
	observe("http://a.test/p8?visit=2", 31)
	if got := strip("http://a.test/p3?visit=5"); got != "http://a.test/p3?visit=5" || inertHosts(j) != 0 {
		t.Errorf("after a pair that differs: %s, %d hosts; want it unlearnt", got, inertHosts(j))
	}

	// A page of few words teaches nothing.
	j = New(Config{})
	for i := range 10 {
		j.ObserveParams(&Page{URL: parse(fmt.Sprintf("http://w.test/p%d?s=%d", i%3, i)), Text: uint64(i % 3), Words: 20})
	}
	if got := strip("http://w.test/p?s=1"); got != "http://w.test/p?s=1" {
		t.Errorf("pages of twenty words: %s; want nothing learnt", got)
	}

	// A gallery: the same words and links on every photo's page, but
	// another image, by path or by query. Its parameter matters.
	for _, img := range []string{"http://g.test/img/%s.jpg", "http://g.test/img.php?photo=%s"} {
		j = New(Config{})
		for _, path := range []string{"/album/1", "/album/2", "/trip"} {
			for i, photo := range []string{"1", "2", "3"} {
				observe("http://g.test"+path+"?photo="+photo, uint64(5+i%2), strings.Replace(img, "%s", photo, 1))
			}
		}
		if got := strip("http://g.test/album/1?photo=4"); got != "http://g.test/album/1?photo=4" || inertHosts(j) != 0 {
			t.Errorf("a gallery of %s: %s, %d hosts; want photo kept", img, got, inertHosts(j))
		}
	}

	// A parameter that matters on one page is not learnt from the others.
	j = New(Config{})
	observe("http://l.test/a?lang=en", 1)
	observe("http://l.test/a?lang=fr", 2)
	for i, path := range []string{"/b", "/c/1", "/d/x", "/e"} {
		observe("http://l.test"+path+"?lang=en", uint64(10+i))
		observe("http://l.test"+path+"?lang=fr", uint64(10+i))
	}
	if got := strip("http://l.test/f?lang=fr"); got != "http://l.test/f?lang=fr" || inertHosts(j) != 0 {
		t.Errorf("a parameter that matters: %s, %d hosts; want it kept", got, inertHosts(j))
	}

	// A second nonce in the links makes a pair prove nothing, rather than
	// that the parameter matters: once the nonce is gone (pages fetched
	// later, say), ref is learnt.
	j = New(Config{})
	pair := func(nonce bool) {
		for _, id := range []string{"1", "2", "3"} {
			for _, ref := range []string{"nav", "footer"} {
				link := "http://n.test/home"
				if nonce {
					link += "?visit=" + id + ref
				}
				j.ObserveParams(&Page{URL: parse("http://n.test/index.php?id=" + id + "&ref=" + ref), Text: uint64(id[0]), Words: 100, Links: []string{link}})
			}
		}
	}
	pair(true)
	if got := strip("http://n.test/p?ref=nav"); got != "http://n.test/p?ref=nav" {
		t.Errorf("beside a second nonce: %s; want nothing learnt", got)
	}
	pair(false)
	if got := strip("http://n.test/p?ref=nav"); got != "http://n.test/p" {
		t.Errorf("after the nonce: %s; want ref learnt", got)
	}
}

// paramValue returns the value of query's parameter name.
func paramValue(query, name string) (string, bool) {
	for pair := range strings.SplitSeq(query, "&") {
		if n, v, _ := strings.Cut(pair, "="); n == name {
			return v, true
		}
	}
	return "", false
}

// inertHosts is the number of hosts with a parameter learnt inert.
func inertHosts(j *Judge) int {
	n, _ := j.InertParams(0)
	return n
}

// urlParser returns a function that canonicalises a URL, or fails t.
func urlParser(t *testing.T) func(string) canon.URL {
	c := canon.New(canon.Config{})
	return func(raw string) canon.URL {
		t.Helper()
		u, err := c.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
}
