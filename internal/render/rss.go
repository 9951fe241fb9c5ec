package render

import (
	"os"
	"strconv"
	"strings"
)

// RSS returns the resident memory of each live browser, in bytes: the
// proportional set size (PSS: each shared page split among the processes
// that map it, so shared libraries are not counted once per process) of
// its process and every process under it (renderers, GPU, network,
// utility). It reads /proc, so it is Linux only; elsewhere it returns
// zeros.
func (p *Pool) RSS() []int64 {
	p.liveMu.Lock()
	pids := make([]int, 0, len(p.live))
	for b := range p.live {
		if pid := b.pid(); pid > 0 {
			pids = append(pids, pid)
		}
	}
	p.liveMu.Unlock()
	children := procChildren()
	out := make([]int64, len(pids))
	for i, pid := range pids {
		stack := []int{pid}
		for len(stack) > 0 {
			q := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out[i] += procRSS(q)
			stack = append(stack, children[q]...)
		}
	}
	return out
}

// procChildren maps each process to its children, from /proc/*/stat.
func procChildren() map[int][]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[ppid] = append(out[ppid], pid)
		}
	}
	return out
}

// procRSS is a process's proportional set size in bytes, from
// /proc/pid/smaps_rollup.
func procRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
