package render

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
)

// Pool is a bounded set of headless browsers. It is safe for concurrent
// use; each Render takes one browser for its page.
type Pool struct {
	cfg   Config
	exec  string
	slots chan *browser // Workers slots; nil: no browser started in it yet
	sink  net.Listener  // the proxy that goes nowhere
	wg    sync.WaitGroup

	restarts atomic.Int64 // browsers killed and replaced
	started  atomic.Int64
	closed   chan struct{}
	once     sync.Once

	liveMu sync.Mutex
	live   map[*browser]struct{} // browsers started and not killed, for RSS

	// named are the hosts (host:port) pages and their requests named,
	// which tell a page's connection at the dead-end proxy from the
	// browser's own; at most maxNamed, forgotten all at once when full.
	namedMu sync.Mutex
	named   map[string]struct{}

	// conns counts the dead-end proxy's connections by target (host:port,
	// "?" for a request line that names none), at most maxConnTargets of
	// them (the rest in unknown); silent those that sent nothing. They
	// are told apart when read (DeadEnds), by the hosts pages named by
	// then: a page's request or WebSocket is heard of over CDP after its
	// connection may have reached the proxy.
	deadMu  sync.Mutex
	conns   map[string]int64
	unknown int64
	silent  int64
}

// DeadEnds is what the browsers sent to the dead-end proxy: connections
// the interception did not see, every one refused there.
type DeadEnds struct {
	// Pages counts the pages' connections, to a host a page or one of
	// its requests named: a WebSocket, which the Fetch domain does not
	// see, or a request of an out-of-process frame.
	Pages int64
	// Browser counts the browsers' own background connections, to hosts
	// no page named: Chromium's calls home (network time, component
	// updates, account checks), which its switches do not all turn off.
	Browser int64
	// Targets are where the browsers' own went (host:port, "?" when the
	// request named none), the most often first, at most maxTargets.
	Targets []string
	// Silent counts connections closed with no request sent on them: the
	// browser opened them ahead of need (a preconnect) and used none.
	Silent int64
}

// maxNamed bounds the hosts pages named that the pool remembers.
const maxNamed = 4096

// maxTargets bounds the targets of the browsers' own connections told
// (they are a handful of Google hosts).
const maxTargets = 8

// maxConnTargets bounds the targets the dead-end proxy counts apart.
const maxConnTargets = 256

// deadEndRead is how long the dead-end proxy waits for a connection's
// request line, to say where it wanted to go.
const deadEndRead = time.Second

// browser is one Chromium process and its root context.
type browser struct {
	dir         string
	allocCancel context.CancelFunc
	ctx         context.Context // the browser's chromedp context
	cancel      context.CancelFunc
}

// New returns a pool of at most cfg.Workers browsers, started when first
// needed. It returns an error wrapping ErrNoChromium when there is no
// browser to run.
func New(cfg Config) (*Pool, error) {
	cfg.setDefaults()
	bin, err := Find(cfg.Chromium)
	if err != nil {
		return nil, err
	}
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("render: listen for the browsers' dead-end proxy: %w", err)
	}
	p := &Pool{cfg: cfg, exec: bin, slots: make(chan *browser, cfg.Workers), sink: sink, closed: make(chan struct{}),
		live: map[*browser]struct{}{}, named: map[string]struct{}{}, conns: map[string]int64{}}
	for range cfg.Workers {
		p.slots <- nil
	}
	p.wg.Go(p.drop)
	return p, nil
}

// drop accepts every connection to the dead-end proxy, reads where it
// wanted to go, counts it (a page's, the browser's own, or one that sent
// nothing) and closes it: nothing the interception missed goes further.
func (p *Pool) drop() {
	for {
		c, err := p.sink.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.refuse(c) })
	}
}

// refuse reads a dead-end connection's request line ("CONNECT host:443
// HTTP/1.1", "GET http://host/path HTTP/1.1"), counts the connection and
// closes it.
func (p *Pool) refuse(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(deadEndRead))
	line, _ := bufio.NewReaderSize(c, 512).ReadString('\n')
	line = strings.TrimSpace(line)
	p.deadMu.Lock()
	defer p.deadMu.Unlock()
	if line == "" {
		p.silent++
		return // no request: nothing was refused
	}
	p.cfg.Log.Debug("render: a browser connection outside interception refused at the dead-end proxy", "request", line)
	target := cmp.Or(requestTarget(line), "?")
	if _, ok := p.conns[target]; ok || len(p.conns) < maxConnTargets {
		p.conns[target]++
	} else {
		p.unknown++
	}
}

// requestTarget is the host:port a proxy request line asks for, "" if it
// names none.
func requestTarget(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 {
		return ""
	}
	if f[0] == "CONNECT" {
		return strings.ToLower(f[1])
	}
	u, err := url.Parse(f[1])
	if err != nil || u.Host == "" {
		return ""
	}
	return hostPort(u)
}

// hostPort is u's host and port, the scheme's default port filled in.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// name records that a page, or one of its requests or WebSockets, named
// rawURL's host.
func (p *Pool) name(rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return
	}
	hp := hostPort(u)
	p.namedMu.Lock()
	defer p.namedMu.Unlock()
	if _, ok := p.named[hp]; !ok && len(p.named) >= maxNamed {
		clear(p.named)
	}
	p.named[hp] = struct{}{}
}

// pageTarget reports whether a page named target: its connection there
// is the page's (made while it rendered, or by a script still running in
// the moment after), not the browser's own.
func (p *Pool) pageTarget(target string) bool {
	p.namedMu.Lock()
	defer p.namedMu.Unlock()
	_, ok := p.named[target]
	return ok
}

// DeadEnds returns what the browsers sent to the dead-end proxy so far,
// a connection to a host a page named the page's, any other the
// browser's own.
func (p *Pool) DeadEnds() DeadEnds {
	p.deadMu.Lock()
	defer p.deadMu.Unlock()
	d := DeadEnds{Browser: p.unknown, Silent: p.silent}
	var own []string
	for t, n := range p.conns {
		if p.pageTarget(t) {
			d.Pages += n
		} else {
			d.Browser += n
			own = append(own, t)
		}
	}
	slices.SortFunc(own, func(a, b string) int {
		return cmp.Or(cmp.Compare(p.conns[b], p.conns[a]), strings.Compare(a, b))
	})
	d.Targets = own[:min(len(own), maxTargets)]
	return d
}

// Restarts counts the browsers killed and replaced (a page over its
// budget, a crash).
func (p *Pool) Restarts() int64 { return p.restarts.Load() }

// Started counts the browsers started.
func (p *Pool) Started() int64 { return p.started.Load() }

// Workers returns the pool's bound.
func (p *Pool) Workers() int { return p.cfg.Workers }

// Close waits for the renders in progress (each bounded by its budget)
// and kills every browser.
func (p *Pool) Close() {
	p.once.Do(func() {
		close(p.closed)
		for range p.cfg.Workers {
			if b := <-p.slots; b != nil {
				p.forget(b)
				b.kill()
			}
		}
		p.sink.Close()
		p.wg.Wait()
	})
}

func (p *Pool) options(dir string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(p.exec), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(dir),
		chromedp.WindowSize(p.cfg.Width, p.cfg.Height),
		// Nothing leaves but through interception: a proxy that goes
		// nowhere, for loopback too.
		chromedp.ProxyServer("http://"+p.sink.Addr().String()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,NetworkPrediction,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,InterestFeedContentSuggestions,NetworkTimeServiceQuerying"),
		chromedp.Flag("no-service-autorun", true),
	)
	if p.cfg.MemoryMB > 0 {
		opts = append(opts, chromedp.Flag("js-flags", "--max-old-space-size="+strconv.Itoa(p.cfg.MemoryMB)))
	}
	return opts
}

// start launches a browser.
func (p *Pool) start() (*browser, error) {
	dir, err := os.MkdirTemp("", "weft-render-")
	if err != nil {
		return nil, fmt.Errorf("render: profile directory: %w", err)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), p.options(dir)...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &browser{dir: dir, allocCancel: acancel, ctx: bctx, cancel: bcancel}
	// The first run starts the process; no timeout on it (it would end
	// the browser), but the pool's close ends it.
	if err := chromedp.Do(bctx); err != nil {
		b.kill()
		return nil, fmt.Errorf("render: start %s: %w", p.exec, err)
	}
	p.started.Add(1)
	p.liveMu.Lock()
	p.live[b] = struct{}{}
	p.liveMu.Unlock()
	return b, nil
}

func (p *Pool) forget(b *browser) {
	p.liveMu.Lock()
	delete(p.live, b)
	p.liveMu.Unlock()
}

// kill ends the browser's process and removes its profile.
func (b *browser) kill() {
	b.cancel()
	b.allocCancel()
	os.RemoveAll(b.dir)
}

// pid is the browser's process id, 0 if unknown.
func (b *browser) pid() int {
	if c := chromedp.FromContext(b.ctx); c != nil && c.Browser != nil {
		if pr := c.Browser.Process(); pr != nil {
			return pr.Pid
		}
	}
	return 0
}

// ErrClosed is returned by Render once the pool is closed.
var ErrClosed = errors.New("render: pool closed")

// ErrBusy is returned by Render when no browser came free within the
// page's budget: its caller, which holds its host meanwhile, goes on
// without the render.
var ErrBusy = errors.New("render: no browser free within the page's budget")

// take waits for a browser slot.
func (p *Pool) take(ctx context.Context) (*browser, error) {
	select {
	case b := <-p.slots:
		select {
		case <-p.closed:
			p.slots <- b
			return nil, ErrClosed
		default:
		}
		if b == nil {
			nb, err := p.start()
			if err != nil {
				p.slots <- nil
				return nil, err
			}
			b = nb
		}
		return b, nil
	case <-p.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// give returns a browser's slot; a browser that must not be used again is
// killed and its slot left empty, for a new one.
func (p *Pool) give(b *browser, broken bool) {
	if broken {
		p.forget(b)
		b.kill()
		p.restarts.Add(1)
		b = nil
	}
	p.slots <- b
}
