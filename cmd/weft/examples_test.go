package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// The Python example reads the shops' product pages through the command
// protocol: each product the shops' robots.txt allows is in the --events
// file with the title and price its page shows, as the Go example finds
// them (examples/products' TestProducts checks the same list).
func TestPythonExampleThroughTheCommandProtocol(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed for the Python example")
		}
		t.Skip("no python3")
	}
	web, err := synthweb.Start(synthweb.Config{World: synthweb.WorldShop, Hosts: 2, PagesPerHost: 20, IPAuthorities: true,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dir := t.TempDir()
	script, err := filepath.Abs("../../examples/products-py/products.py")
	if err != nil {
		t.Fatal(err)
	}
	eventsFile := filepath.Join(dir, "products.jsonl")
	args := append([]string{"crawl", "--data", filepath.Join(dir, "data"), "--delay", "2ms", "--allow-cidr", "127.0.0.0/8",
		"--progress", "never", "--exclude", "/cart/", "--handler", "text/html=python3 " + script, "--events", eventsFile}, web.Seeds()...)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("weft crawl exited %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "extended:   python3 ") || strings.Contains(out.String(), "failed python3") {
		t.Errorf("the summary should count the handler's pages and no failure:\n%s", out.String())
	}
	f, err := os.Open(eventsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []synthweb.Product
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if title, ok := e.Fields["title"].(string); ok {
			price, _ := e.Fields["price"].(string)
			got = append(got, synthweb.Product{URL: e.URL, Title: title, Price: price})
		}
	}
	want := web.Products()
	byURL := func(a, b synthweb.Product) int { return strings.Compare(a.URL, b.URL) }
	slices.SortFunc(got, byURL)
	slices.SortFunc(want, byURL)
	if len(want) < 30 || !slices.Equal(got, want) {
		t.Errorf("products:\n got %v\nwant %v", got, want)
	}
}
