package judge

import (
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

// A parameter is learnt inert from three pairs of pages whose URLs differ
// in its value alone and that are the same page modulo the parameter
// (words, links and embeds), of two URL patterns at least; a pair that
// differs keeps it from being learnt, or unlearns it. Only a learnt
// parameter is stripped, and only on its host.
func TestObserveParams(t *testing.T) {
	c := canon.New(canon.Config{})
	parse := func(raw string) canon.URL {
		u, err := c.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	var j *Judge
	// observe takes a page at raw of words text whose links carry the
	// visit of its own URL, as a session id does, and the embeds given.
	observe := func(raw string, text uint64, embeds ...string) {
		u := parse(raw)
		visit := ""
		if _, v, ok := cutParam(u.Query, "visit"); ok {
			visit = "?visit=" + v
		}
		links := append([]string{"http://" + u.Authority + "/home" + visit, "http://" + u.Authority + "/about" + visit}, embeds...)
		j.ObserveParams(&Page{URL: u, Text: text, Links: links})
	}
	strip := func(raw string) string {
		got, _ := j.WithoutInertParams(parse(raw))
		return got.String
	}

	j = New(Config{})
	// A search page that answers every query alike: one pattern teaches
	// nothing.
	for _, q := range []string{"a", "b", "c", "d", "e"} {
		observe("http://a.test/search?q="+q, 1)
	}
	// Pages that differ in two parameters are no pair.
	observe("http://a.test/x?id=1&visit=1", 2)
	observe("http://a.test/x?id=2&visit=2", 2)
	// Two pairs, of two patterns.
	observe("http://a.test/p1?visit=1", 10)
	observe("http://a.test/p1?visit=2", 10)
	observe("http://a.test/story/2?id=7&visit=3", 20)
	observe("http://a.test/story/2?id=7&visit=4", 20)
	if got := strip("http://a.test/p3?visit=5"); got != "http://a.test/p3?visit=5" || inertHosts(j) != 0 {
		t.Errorf("two pairs: %s, %d hosts; want nothing learnt yet", got, inertHosts(j))
	}
	observe("http://a.test/p1?visit=9", 10)
	for in, want := range map[string]string{
		"http://a.test/p3?visit=5":      "http://a.test/p3",
		"http://a.test/p3?id=7&visit=5": "http://a.test/p3?id=7",
		"http://a.test/p3?id=7":         "http://a.test/p3?id=7",
		"http://b.test/p3?visit=5":      "http://b.test/p3?visit=5",
		"http://a.test/search?q=a":      "http://a.test/search?q=a",
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

	// A gallery: the same words and links on every photo's page, but
	// another image. Its parameter matters, however many pairs.
	j = New(Config{})
	for _, path := range []string{"/album/1", "/album/2", "/trip"} {
		for _, photo := range []string{"1", "2", "3"} {
			observe("http://g.test"+path+"?photo="+photo, 5, "http://g.test/img/"+path+"/"+photo+".jpg")
		}
	}
	if got := strip("http://g.test/album/1?photo=4"); got != "http://g.test/album/1?photo=4" || inertHosts(j) != 0 {
		t.Errorf("a gallery: %s, %d hosts; want photo kept", got, inertHosts(j))
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
}

// cutParam returns the value of query's parameter name.
func cutParam(query, name string) (string, string, bool) {
	for pair := range strings.SplitSeq(query, "&") {
		if n, v, _ := strings.Cut(pair, "="); n == name {
			return n, v, true
		}
	}
	return "", "", false
}

// inertHosts is the number of hosts with a parameter learnt inert.
func inertHosts(j *Judge) int {
	n, _ := j.InertParams(0)
	return n
}
