package judge

import (
	"strconv"
	"strings"

	"github.com/weft-crawler/weft/internal/canon"
)

// What a host's near-duplicate window knows of where its copies are, and
// what of the host is cut off for them: store.HostState.NearDirs, a line
// for each round of the window (the current one, then the one before:
// a round is as many pages as the window), then a line for each
// directory cut off. A round's line is the deepest directory its
// near-duplicates are all under, and how deep (in path segments) the
// deepest of them is; a cut's line is the directory and that depth: it
// refuses a URL under the directory as deep as its copies were, or less,
// so that a shop's products under /collections/shoes/products/, one
// segment deeper than its filters' copies (/collections/shoes/red+wool),
// are still fetched. Copies of one path under other queries
// (/collections/shoes?sort_by=price) are under their path and '?', which
// refuses the path's other queries only. A round's line is "" when it
// had no near-duplicate; NearDirs is "" when all are. A canonical path
// holds no tab, newline or '?' (they are escaped).
type nearDirs struct {
	cur, prev dirCut // where a round's near-duplicates are ("" for none), and how deep the deepest is
	cuts      cuts
}

// dirCut is a directory cut off, and how deep under it: a URL under it of
// at most depth segments is refused; or a path and '?', whose other
// queries are.
type dirCut struct {
	dir   string
	depth int
}

// cuts is the lines of the directories cut off, each ended by '\n'.
type cuts string

// The bounds of what a host's state keeps: a host with copies in more
// directories than maxCutDirs is a host of copies, and is cut off whole;
// a directory is at most a path's first maxDirBytes bytes (a shallower
// cut than the copies' directory bounds them all the same).
const (
	maxCutDirs  = 8
	maxDirBytes = 128
)

func parseNearDirs(s string) nearDirs {
	if s == "" {
		return nearDirs{}
	}
	cur, rest, _ := strings.Cut(s, "\n")
	prev, cs, _ := strings.Cut(rest, "\n")
	return nearDirs{cur: parseDirCut(cur), prev: parseDirCut(prev), cuts: cuts(cs)}
}

// String is the NearDirs parseNearDirs reads.
func (d nearDirs) String() string {
	if d == (nearDirs{}) {
		return ""
	}
	var b strings.Builder
	b.Grow(len(d.cur.dir) + len(d.prev.dir) + len(d.cuts) + 16)
	for _, r := range [...]dirCut{d.cur, d.prev} {
		if r.dir != "" {
			b.WriteString(r.dir)
			b.WriteByte('\t')
			b.WriteString(strconv.Itoa(r.depth))
		}
		b.WriteByte('\n')
	}
	b.WriteString(string(d.cuts))
	return b.String()
}

// copy notes a near-duplicate at u in the current round.
func (d *nearDirs) copy(u canon.URL) {
	dir := dirOf(u.Path)
	if u.Query != "" && len(u.Path) < maxDirBytes {
		dir = u.Path + "?"
	}
	if len(dir) > maxDirBytes {
		dir = dir[:maxDirBytes]
	}
	if d.cur.dir != "" {
		dir = commonDir(d.cur.dir, dir)
	}
	d.cur = dirCut{dir: dir, depth: max(d.cur.depth, pathDepth(u.Path))}
}

// under is the directory the near-duplicates of both rounds are under,
// and how deep the deepest is.
func (d nearDirs) under() dirCut {
	switch {
	case d.prev.dir == "":
		return d.cur
	case d.cur.dir == "":
		return d.prev
	}
	return dirCut{dir: commonDir(d.cur.dir, d.prev.dir), depth: max(d.cur.depth, d.prev.depth)}
}

// line is c as a line of NearDirs, without its '\n'; "" for none.
func (c dirCut) line() string {
	if c.dir == "" {
		return ""
	}
	return c.dir + "\t" + strconv.Itoa(c.depth)
}

// parseDirCut reads a line ("" for none); a depth that does not read is
// no bound.
func parseDirCut(line string) dirCut {
	if line == "" {
		return dirCut{}
	}
	dir, depth, _ := strings.Cut(line, "\t")
	n, err := strconv.Atoi(depth)
	if err != nil {
		n = maxPathDepth
	}
	return dirCut{dir: dir, depth: n}
}

// maxPathDepth is deeper than any path a crawl admits.
const maxPathDepth = 1 << 16

// refuse reports whether u is in one of the directories cut: under it,
// as deep as its copies or less (the directory's own page is not), or,
// for a path and '?', the path with another query.
func (cs cuts) refuse(u canon.URL) bool {
	for rest := string(cs); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		dir, depth, _ := strings.Cut(line, "\t")
		if path, ok := strings.CutSuffix(dir, "?"); ok {
			if u.Path == path && u.Query != "" {
				return true
			}
			continue
		}
		if dir == "" || len(u.Path) <= len(dir) || !strings.HasPrefix(u.Path, dir) {
			continue
		}
		if n, err := strconv.Atoi(depth); err != nil || pathDepth(u.Path) <= n {
			return true
		}
	}
	return false
}

// has reports whether dir is cut off.
func (cs cuts) has(dir string) bool {
	for rest := string(cs); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if parseDirCut(line).dir == dir {
			return true
		}
	}
	return false
}

// len is the number of directories cut off.
func (cs cuts) len() int { return strings.Count(string(cs), "\n") }

// with is cs and c.
func (cs cuts) with(c dirCut) cuts { return cs + cuts(c.line()+"\n") }

// pathDepth is the number of segments of path: 2 for /a/b and /a/b/, 0
// for /.
func pathDepth(path string) int {
	n := strings.Count(path, "/")
	if strings.HasSuffix(path, "/") {
		n--
	}
	return n
}

// dirOf is the directory of path: up to its last '/' ("/" for none).
func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "/"
}

// commonDir is the deepest directory both directories a and b are under
// (or are); a directory may be a path's first maxDirBytes bytes, which
// is its own when both are it.
func commonDir(a, b string) string {
	if a == b {
		return a
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return dirOf(a[:i])
}
