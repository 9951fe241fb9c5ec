// Command products crawls a shop and writes a JSON line per product page:
// its URL, its title and its price, read by CSS selectors (goquery).
//
//	go run ./examples/products -data shop-data https://shop.example/ > products.jsonl
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/weft-crawler/weft"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "products:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("products", flag.ContinueOnError)
	data := fs.String("data", "shop-data", "the crawl's data directory")
	delay := fs.Duration("delay", time.Second, "least time between two requests to the shop")
	allow := fs.String("allow", "", "a private address range the shop is in (127.0.0.0/8 for a test shop)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	cfg := weft.Config{
		Seeds: fs.Args(), DataDir: *data, Delay: *delay, UserAgent: "weft-products-example/1.0 (+https://example.org/weft)",
		Filters: []weft.LinkFilter{weft.LinkFilterFunc(func(l weft.Link) string {
			if strings.Contains(l.URL, "/cart/") {
				return "cart" // "Add to cart" is not a page to crawl
			}
			return ""
		})},
		Consumers: []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(p.Body))
			if err != nil || p.Status != 200 || doc.Find("h1.title").Length() == 0 {
				return nil // not a product page
			}
			mu.Lock()
			defer mu.Unlock()
			return enc.Encode(map[string]string{"url": p.URL, "title": strings.TrimSpace(doc.Find("h1.title").Text()),
				"price": strings.TrimSpace(doc.Find(".price .amount").Text())})
		})},
	}
	if *allow != "" {
		p, err := netip.ParsePrefix(*allow)
		if err != nil {
			return err
		}
		cfg.AllowNetworks = []netip.Prefix{p}
	}
	c, err := weft.New(cfg)
	if err != nil {
		return err
	}
	_, err = c.Run(ctx)
	return err
}
