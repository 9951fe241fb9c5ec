package crawl

import (
	"context"
	"net/netip"
	"strings"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
)

// IP grouping modes (Config.IPGroup).
const (
	IPGroupOff    = "off"    // no per-server clock
	IPGroupIP     = "ip"     // hosts that resolve to one address share a clock
	IPGroupSubnet = "subnet" // ... to one /24 (IPv4) or /64 (IPv6)
)

// groupOf finds the server group of a host (a canonical URL's Host) for
// per-IP politeness, by mode (Config.IPGroup): its first address, or that
// address's subnet, as fetcher resolves it. A host
// that does not resolve has no group (its fetch fails on DNS, with no
// request sent).
func groupOf(ctx context.Context, fetcher *fetch.Fetcher, mode, host string) frontier.Result {
	res := frontier.Result{Retry: true, SetGroup: true}
	addr, err := fetcher.Lookup(ctx, strings.Trim(host, "[]"))
	if err != nil {
		return res
	}
	switch mode {
	case IPGroupSubnet:
		bits := 24
		if addr.Is6() {
			bits = 64
		}
		res.Group = netip.PrefixFrom(addr, bits).Masked().String()
	default:
		res.Group = addr.String()
	}
	return res
}
