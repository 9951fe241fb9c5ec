package seen

import "sync"

// knownKeys is a bounded exact cache of keys known to be in the store. It
// never holds a key the store lacks (the store only grows), so a hit is as
// good as the store's "yes"; a miss only costs the lookup it saves.
//
// Each of its shards (by the key's first byte: keys are hashes, so shards
// fill evenly however skewed the hosts are) keeps two maps, the one being
// filled and the one before it; a key is looked up in both, and one found
// only in the older is put in the newer again. When the newer holds its
// half of the bound, the older is cleared and the two swap. Memory stays
// within the bound, and what was used within the last half of it stays:
// an LRU's behaviour at the cost of two map lookups, with no list to keep.
type knownKeys struct {
	shards [knownShards]knownShard
}

const knownShards = 64

type knownShard struct {
	mu       sync.Mutex
	cur, old map[Key]struct{}
	half     int
}

func newKnownKeys(bound int) *knownKeys {
	half := max(bound/knownShards/2, 1)
	k := &knownKeys{}
	for i := range k.shards {
		k.shards[i] = knownShard{cur: make(map[Key]struct{}), old: make(map[Key]struct{}), half: half}
	}
	return k
}

func (k *knownKeys) shard(key Key) *knownShard { return &k.shards[key[0]%knownShards] }

// has reports whether key is known; nil knows none.
func (k *knownKeys) has(key Key) bool {
	if k == nil {
		return false
	}
	sh := k.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.cur[key]; ok {
		return true
	}
	if _, ok := sh.old[key]; ok {
		sh.putLocked(key)
		return true
	}
	return false
}

// put records that key is in the store; nil records nothing.
func (k *knownKeys) put(key Key) {
	if k == nil {
		return
	}
	sh := k.shard(key)
	sh.mu.Lock()
	sh.putLocked(key)
	sh.mu.Unlock()
}

func (sh *knownShard) putLocked(key Key) {
	if len(sh.cur) >= sh.half {
		clear(sh.old)
		sh.old, sh.cur = sh.cur, sh.old
	}
	sh.cur[key] = struct{}{}
}

// len is the number of keys held; 0 for nil.
func (k *knownKeys) len() int {
	if k == nil {
		return 0
	}
	n := 0
	for i := range k.shards {
		sh := &k.shards[i]
		sh.mu.Lock()
		n += len(sh.cur) + len(sh.old)
		sh.mu.Unlock()
	}
	return n
}
