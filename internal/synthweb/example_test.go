package synthweb_test

import (
	"fmt"
	"log"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// A crawler test starts a web, hands the crawler Seeds() and Resolve(),
// crawls, then judges the crawl from Log() against AllPages().
func ExampleStart() {
	w, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 3, PagesPerHost: 12})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	fmt.Println(len(w.Seeds()), "seeds; h000 at", w.Resolve()["h000.weft.test"])
	var fetchable int
	for _, p := range w.AllPages() {
		if p.Reachable && !p.Disallowed {
			fetchable++
		}
	}
	fmt.Println(fetchable > 0, len(w.Log()))
	// Output:
	// 3 seeds; h000 at 127.0.1.1
	// true 0
}
