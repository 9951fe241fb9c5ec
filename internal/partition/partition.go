// Package partition maps a host to the partition that owns its crawl state.
//
// Politeness, robots.txt, DNS, the URL table and the seen set are all about a
// host, so all of them are split by the same function: partition =
// hash(host) mod P, with P fixed when a crawl is created. Every package that
// shards state by host calls Of, so a partition's state can later move between
// machines as one unit.
package partition

import "hash/fnv"

// Of returns the partition of host among n partitions. It is stable across
// processes and machines (FNV-1a, not a seeded map hash). n <= 1 means one
// partition, 0.
func Of(host string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(host))
	return int(h.Sum64() % uint64(n))
}
