package render

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
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

	escapes  atomic.Int64 // connections the sink received
	restarts atomic.Int64 // browsers killed and replaced
	started  atomic.Int64
	closed   chan struct{}
	once     sync.Once

	liveMu sync.Mutex
	live   map[*browser]struct{} // browsers started and not killed, for RSS
}

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
	p := &Pool{cfg: cfg, exec: bin, slots: make(chan *browser, cfg.Workers), sink: sink, closed: make(chan struct{}), live: map[*browser]struct{}{}}
	for range cfg.Workers {
		p.slots <- nil
	}
	p.wg.Go(p.drop)
	return p, nil
}

// drop accepts and closes every connection to the dead-end proxy: a
// request the interception missed fails there, and is counted.
func (p *Pool) drop() {
	for {
		c, err := p.sink.Accept()
		if err != nil {
			return
		}
		p.escapes.Add(1)
		// The request line says where it wanted to go ("CONNECT
		// host:443 HTTP/1.1"): read it, briefly, for the log.
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		line, _ := bufio.NewReaderSize(c, 512).ReadString('\n')
		p.cfg.Log.Debug("render: a browser connection outside interception refused at the dead-end proxy", "request", strings.TrimSpace(line))
		c.Close()
	}
}

// Escapes counts the connections a browser tried outside interception
// (a WebSocket, a service worker's request), every one refused.
func (p *Pool) Escapes() int64 { return p.escapes.Load() }

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
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,NetworkPrediction,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,InterestFeedContentSuggestions"),
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
