package judge

import (
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

// A parameter is learnt inert from three pairs of pages whose URLs differ
// in its value alone and that read the same, on two paths at least; a
// pair that reads differently keeps it from being learnt. Only a learnt
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
	j := New(Config{})
	strip := func(raw string) string {
		got, _ := j.WithoutInertParams(parse(raw))
		return got.String
	}
	// Pages of a search page that answers every query alike: one path
	// teaches nothing.
	for _, q := range []string{"a", "b", "c", "d", "e"} {
		j.ObserveParams(parse("http://a.test/search?q="+q), 1)
	}
	if got := strip("http://a.test/search?q=a"); got != "http://a.test/search?q=a" || inertHosts(j) != 0 {
		t.Errorf("one path: %s, %d hosts; want nothing learnt", got, inertHosts(j))
	}
	// Pages that differ in two parameters are no pair.
	j.ObserveParams(parse("http://a.test/x?id=1&visit=1"), 2)
	j.ObserveParams(parse("http://a.test/x?id=2&visit=2"), 2)
	// Two pairs, on two paths.
	j.ObserveParams(parse("http://a.test/p1?visit=1"), 10)
	j.ObserveParams(parse("http://a.test/p1?visit=2"), 10)
	j.ObserveParams(parse("http://a.test/p2?id=7&visit=3"), 20)
	j.ObserveParams(parse("http://a.test/p2?id=7&visit=4"), 20)
	if got := strip("http://a.test/p3?visit=5"); got != "http://a.test/p3?visit=5" {
		t.Errorf("two pairs: %s; want nothing learnt yet", got)
	}
	j.ObserveParams(parse("http://a.test/p1?visit=9"), 10)
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
	if inertHosts(j) != 1 {
		t.Errorf("%d hosts with a parameter learnt; want 1", inertHosts(j))
	}

	// A pair that reads differently proves the parameter matters: it is
	// not learnt, however many pairs read the same.
	j = New(Config{})
	j.ObserveParams(parse("http://l.test/a?lang=en"), 1)
	j.ObserveParams(parse("http://l.test/a?lang=fr"), 2)
	for i, path := range []string{"/b", "/c", "/d", "/e"} {
		j.ObserveParams(parse("http://l.test"+path+"?lang=en"), uint64(10+i))
		j.ObserveParams(parse("http://l.test"+path+"?lang=fr"), uint64(10+i))
	}
	if got := strip("http://l.test/f?lang=fr"); got != "http://l.test/f?lang=fr" || inertHosts(j) != 0 {
		t.Errorf("a parameter that matters: %s, %d hosts; want it kept", got, inertHosts(j))
	}
}

// inertHosts is the number of hosts with a parameter learnt inert.
func inertHosts(j *Judge) int {
	n, _ := j.InertParams(0)
	return n
}
