package cluster

import "github.com/weft-crawler/weft/internal/crawl"

// A Node is its own crawl's crawl.Cluster, the crawl's to call: Owns,
// Forward (links.go), Claim (handoff.go), Fetched and Clocked (visits.go),
// RobotsHop (hops.go), Keeps.
var _ crawl.Cluster = (*Node)(nil)

// Owns is false for every host: every URL goes through its partition's
// log, the node's own ones too, for the log is what a later owner
// rebuilds the partition from.
func (*Node) Owns(string) bool { return false }

// Keeps is false: a partition, and its hosts, may be handed to another
// node at any time.
func (*Node) Keeps() bool { return false }
