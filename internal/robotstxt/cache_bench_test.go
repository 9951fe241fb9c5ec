package robotstxt

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/robots"
)

// BenchmarkRobotsCacheHeap measures the heap the robots.txt cache keeps for
// 20,000 origins whose robots.txt has 80 rules, with no bound (as before
// the host cache applied to it) and with the default bound for a host
// cache of 4,096 (1,024 parsed files). It reports bytes per origin seen.
func BenchmarkRobotsCacheHeap(b *testing.B) {
	var body strings.Builder
	body.WriteString("User-agent: *\n")
	for i := range 80 {
		fmt.Fprintf(&body, "Disallow: /private/section-%d/*.php$\n", i)
	}
	const origins = 20_000
	for _, bc := range []struct {
		name  string
		bound int
	}{{"unbounded", 0}, {"bound1024", 1024}} {
		b.Run(bc.name, func(b *testing.B) {
			var perHost float64
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				c := NewCache(CacheConfig{Partitions: 64, Bound: bc.bound})
				now := time.Now()
				for i := range origins {
					e := c.entry(Origin("http", fmt.Sprintf("h%06d.test", i)))
					pol := robots.FromStatus(200, []byte(body.String()), "weft", now)
					e.hist.Record(pol)
					c.verdictOf(e, now)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perHost = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / origins
				runtime.KeepAlive(c)
			}
			b.ReportMetric(perHost, "heap-B/origin")
		})
	}
}
