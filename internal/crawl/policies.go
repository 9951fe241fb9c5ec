package crawl

import "github.com/weft-crawler/weft/internal/inforce"

// Policies are the operators' policies in force (Config.Policies), which
// an operator may change while the crawl runs (package inforce).
type Policies = inforce.Policies

// Policies returns the operators' policies, to read and change while the
// crawl runs.
func (c *Crawler) Policies() *Policies { return c.policies }
