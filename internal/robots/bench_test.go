package robots

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"
)

var benchPaths = []string{
	"/",
	"/products/shoes/red-sneaker-42.html",
	"/search?q=red+shoes&sort=price",
	"/private/press/2026/launch.html",
	"/users/1234/settings",
	"/docs/manual.pdf",
	"/blog/2025/12/why-we-crawl?utm_source=x&sessionid=abc",
	"/caf%C3%A9/menu",
}

func BenchmarkAllowed(b *testing.B) {
	p := Parse([]byte(typicalRobots), "weft", 200, t0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Allowed(benchPaths[i%len(benchPaths)])
	}
}

// BenchmarkAllowedLargeFile measures a file of 2,000 rules for our agent:
// the cost per URL is linear in the rules that apply.
func BenchmarkAllowedLargeFile(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("User-agent: weft\n")
	for i := range 1000 {
		fmt.Fprintf(&sb, "Disallow: /section-%d/\nAllow: /section-%d/*.html$\n", i, i)
	}
	p := Parse([]byte(sb.String()), "weft", 200, t0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Allowed(benchPaths[i%len(benchPaths)])
	}
}

// BenchmarkGrobotstxtAgentAllowed is the per-URL cost this package avoids.
func BenchmarkGrobotstxtAgentAllowed(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		grobotstxt.AgentAllowed(typicalRobots, "weft", "http://foo.bar"+benchPaths[i%len(benchPaths)])
	}
}

func BenchmarkParse(b *testing.B) {
	body := []byte(typicalRobots)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body, "weft", 200, t0)
	}
}

// BenchmarkAllowedRules compares trying every rule with the prefix index by
// the number of rules, to place indexMin.
func BenchmarkAllowedRules(b *testing.B) {
	for _, n := range []int{16, 32, 64, 128, 512, 2048} {
		var sb strings.Builder
		sb.WriteString("User-agent: weft\n")
		// A large site's mix: mostly directories, some with a wildcard
		// tail, a few leading wildcards (which every lookup must try).
		for i := range n {
			switch i % 10 {
			case 0:
				fmt.Fprintf(&sb, "Disallow: /*?param%d=\n", i)
			case 1, 2:
				fmt.Fprintf(&sb, "Allow: /%c%d/*.html$\n", 'a'+i%26, i)
			default:
				fmt.Fprintf(&sb, "Disallow: /%c%d/\n", 'a'+i%26, i)
			}
		}
		p := Parse([]byte(sb.String()), "weft", 200, t0)
		indexed, linear := *p, *p
		indexed.index, linear.index = newPrefixIndex(&p.ruleSet), nil
		for _, mode := range []struct {
			name string
			p    *Policy
		}{{"linear", &linear}, {"index", &indexed}} {
			b.Run(fmt.Sprintf("rules=%d/%s", n, mode.name), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					mode.p.Allowed(benchPaths[i%len(benchPaths)])
				}
			})
		}
	}
}
