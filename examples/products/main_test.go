package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/synthweb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example crawls two shops on loopback and writes every product the
// shops' robots.txt allows, with the title and price the pages show, and
// its link filter keeps the crawl off the cart.
func TestProducts(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{World: synthweb.WorldShop, Hosts: 2, PagesPerHost: 20, IPAuthorities: true,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	var out bytes.Buffer
	args := append([]string{"-data", t.TempDir(), "-delay", "2ms", "-allow", "127.0.0.0/8"}, web.Seeds()...)
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	var got []synthweb.Product
	for line := range strings.Lines(out.String()) {
		var p synthweb.Product
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, p)
	}
	want := web.Products()
	byURL := func(a, b synthweb.Product) int { return strings.Compare(a.URL, b.URL) }
	slices.SortFunc(got, byURL)
	slices.SortFunc(want, byURL)
	if len(want) < 30 || !slices.Equal(got, want) {
		t.Errorf("products:\n got %v\nwant %v", got, want)
	}
	for _, r := range web.Log() {
		if strings.HasPrefix(r.Path, "/cart/") {
			t.Errorf("the crawl asked for %s, which its filter refuses", r.Path)
		}
	}
}
