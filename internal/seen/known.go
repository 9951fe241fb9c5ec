package seen

import "sync"

// knownKeys is a bounded exact cache of keys known to be in the store. It
// never holds a key the store lacks (the store only grows), so a hit is as
// good as the store's "yes"; a miss only costs the lookup it saves. With
// each key it keeps the least link depth it was met at since it came in
// (met), if any: a URL first found deep and queued at that depth is
// fetched at the least (Set.Depth).
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

// knownShard maps each key to the least depth it was met at, plus one
// (0: none noted, the depth it was queued at stands).
type knownShard struct {
	mu       sync.Mutex
	cur, old map[Key]uint8
	half     int
}

func newKnownKeys(bound int) *knownKeys {
	half := max(bound/knownShards/2, 1)
	k := &knownKeys{}
	for i := range k.shards {
		k.shards[i] = knownShard{cur: make(map[Key]uint8), old: make(map[Key]uint8), half: half}
	}
	return k
}

func (k *knownKeys) shard(key Key) *knownShard { return &k.shards[key[0]%knownShards] }

// has reports whether key is known; nil knows none.
func (k *knownKeys) has(key Key) bool { return k.met(key, -1) }

// put records that key is in the store; nil records nothing.
func (k *knownKeys) put(key Key) {
	if k == nil {
		return
	}
	sh := k.shard(key)
	sh.mu.Lock()
	if _, ok := sh.getLocked(key); !ok {
		sh.putLocked(key, 0)
	}
	sh.mu.Unlock()
}

// met reports whether key is known (nil knows none) and, if it is,
// notes that a link to it was met at depth, under the one look: a
// negative depth notes nothing, nor does one past what a byte holds (the
// least would be wrong).
func (k *knownKeys) met(key Key, depth int) bool {
	if k == nil {
		return false
	}
	sh := k.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	least, ok := sh.getLocked(key)
	if d := uint8(depth + 1); ok && depth >= 0 && depth < 254 && (least == 0 || d < least) {
		sh.cur[key] = d // getLocked put it in cur
	}
	return ok
}

// depth returns the least depth a link to key was met at since it came
// in, if one was noted.
func (k *knownKeys) depth(key Key) (int, bool) {
	if k == nil {
		return 0, false
	}
	sh := k.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	least, ok := sh.getLocked(key)
	return int(least) - 1, ok && least > 0
}

// getLocked looks key up in both maps, moving one found in the older to
// the newer; sh.mu is held.
func (sh *knownShard) getLocked(key Key) (uint8, bool) {
	if v, ok := sh.cur[key]; ok {
		return v, true
	}
	if v, ok := sh.old[key]; ok {
		sh.putLocked(key, v)
		return v, true
	}
	return 0, false
}

func (sh *knownShard) putLocked(key Key, v uint8) {
	if len(sh.cur) >= sh.half {
		clear(sh.old)
		sh.old, sh.cur = sh.cur, sh.old
	}
	sh.cur[key] = v
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
