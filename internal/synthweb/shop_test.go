package synthweb

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A shop's product pages show the title and price Products says, in the
// markup the examples select; robots.txt leaves out what it disallows.
func TestShop(t *testing.T) {
	w := startWeb(t, Config{World: WorldShop, Hosts: 2, PagesPerHost: 14, RobotsKinds: []RobotsKind{RobotsNotFound, RobotsServerError}, IPAuthorities: true})
	ps := w.Products()
	if len(ps) != 14 { // the second shop's robots.txt answers 503: nothing of it may be fetched
		t.Fatalf("%d products, want the first shop's 14", len(ps))
	}
	soldOut := 0
	for _, p := range ps {
		body := shopGet(t, p.URL)
		if !strings.Contains(body, `<h1 class="title">`+strings.ReplaceAll(p.Title, "&", "&amp;")+`</h1>`) {
			t.Errorf("%s: no title %q in\n%s", p.URL, p.Title, body)
		}
		if p.Price == "" {
			soldOut++
			if strings.Contains(body, `class="price"`) {
				t.Errorf("%s: sold out, but shows a price", p.URL)
			}
		} else if !strings.Contains(body, `<span class="amount">`+p.Price+`</span>`) {
			t.Errorf("%s: no price %s in\n%s", p.URL, p.Price, body)
		}
	}
	if soldOut != 2 {
		t.Errorf("%d products sold out, want 2 (one in seven)", soldOut)
	}
	home := shopGet(t, w.Seeds()[0])
	for _, c := range []string{"/c/0", "/c/1", "/c/2"} {
		if !strings.Contains(home, `href="`+c+`"`) {
			t.Errorf("home page links no %s", c)
		}
	}
	if cat := shopGet(t, w.Seeds()[0]+"c/1"); !strings.Contains(cat, `href="/p/13"`) || strings.Contains(cat, `href="/p/0"`) {
		t.Errorf("category 1 should list products 1, 4, ..., 13 only:\n%s", cat)
	}
}

func shopGet(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", url, resp.Status)
	}
	return string(b)
}
