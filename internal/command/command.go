// Package command runs content extensions as separate programs that speak
// JSON lines on their standard input and output, so that people who do
// not write Go can read pages for a crawl (the command protocol, version
// 1; docs/extensions.md).
//
// For each response of the media types it accepts, weft writes the body,
// its Content-Encoding undone, to a file, and one line to the program:
//
//	{"v":1,"id":7,"url":"http://shop.test/p/1","media_type":"text/html",
//	 "header":{"Content-Type":["text/html"]},"body_file":"/tmp/weft-cmd-123/0.body",
//	 "body_bytes":5123,"truncated":""}
//
// The program answers with one line, in order:
//
//	{"id":7,"links":["/p/2"],"fields":{"title":"Kettle","price":"12.50"},"follow":true}
//
// "links" are more links to follow, "fields" values it extracted (they go
// with the page to its events and consumers), "follow": false keeps every
// link of the page from being followed and "noindex": true marks it, and
// "error" says it failed on this page. The body file is the program's to
// read until it answers.
//
// Each answer has Timeout; a program that does not answer in time, exits,
// or writes a line that is not an answer is killed (with its process
// group) and started again for the next page; its address space is
// capped with RLIMIT_AS on Linux. Every such failure is the page's alone:
// the crawl counts it and goes on.
package command

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weft-crawler/weft/internal/plugin"
)

// Version is the protocol's version, sent as "v" in every request.
const Version = 1

// Defaults of Config's zero fields.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxMemory = 1 << 30
	DefaultMaxAnswer = 1 << 20
)

// Config describes a command handler.
type Config struct {
	// Name labels its counts and logs; "" means the program's base name.
	Name string
	// Argv is the program and its arguments, run directly, not through a
	// shell (so that its memory cap is its own, not a shell's).
	Argv []string
	// MediaTypes it reads: "text/html", "text/*" or "*/*".
	MediaTypes []string
	// Timeout bounds each answer; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxMemory caps each process's address space in bytes (RLIMIT_AS,
	// set on Linux before the first request is written); zero means
	// DefaultMaxMemory, negative no cap. Runtimes that reserve much more
	// address space than they use (Java, Node) need a larger cap.
	MaxMemory int64
	// Procs is how many copies of the program run at once, each on one
	// page at a time; zero means 1.
	Procs int
	// MaxAnswer bounds an answer line in bytes; zero means
	// DefaultMaxAnswer.
	MaxAnswer int
	// Logger receives the program's standard error, line by line, and a
	// line per restart; nil discards.
	Logger *slog.Logger
}

// Handler runs a program for the pages of its media types. It implements
// plugin.Handler. It is safe for concurrent use; Close stops it.
type Handler struct {
	cfg    Config
	log    *slog.Logger
	slots  chan *proc // idle processes (nil: to start), Procs of them
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup // the readers of every process
	nextID atomic.Uint64
	stats  counts

	dirMu sync.Mutex
	dir   string // the body files' directory, made when a program first starts
	gone  bool   // Close removed it
}

// bodyDir returns the directory of the body files, made at the first call:
// a handler made for a crawl that never gets to start it (a flag refused
// after, a test of the configuration) leaves nothing behind.
func (h *Handler) bodyDir() (string, error) {
	h.dirMu.Lock()
	defer h.dirMu.Unlock()
	if h.gone {
		return "", fmt.Errorf("command %s: closed", h.cfg.Name)
	}
	if h.dir == "" {
		dir, err := os.MkdirTemp("", "weft-cmd-")
		if err != nil {
			return "", fmt.Errorf("command %s: %w", h.cfg.Name, err)
		}
		h.dir = dir
	}
	return h.dir, nil
}

// counts are a handler's totals.
type counts struct {
	requests, failures, starts atomic.Int64
}

// Stats are what a handler did: pages asked, pages failed, processes
// started (one per slot, and one more after each failure that killed one).
type Stats struct {
	Requests, Failures, Starts int64
}

// New checks cfg and finds the program; no process starts before the
// first page.
func New(cfg Config) (*Handler, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, errors.New("command: no program")
	}
	if len(cfg.MediaTypes) == 0 {
		return nil, fmt.Errorf("command %s: no media types", cfg.Argv[0])
	}
	for _, t := range cfg.MediaTypes {
		if t != "*/*" && (strings.Count(t, "/") != 1 || strings.HasPrefix(t, "/") || strings.HasSuffix(t, "/")) {
			return nil, fmt.Errorf("command %s: media type %q: want type/subtype, type/* or */*", cfg.Argv[0], t)
		}
	}
	if cfg.Timeout < 0 || cfg.Procs < 0 || cfg.MaxAnswer < 0 {
		return nil, fmt.Errorf("command %s: negative timeout, procs or answer size", cfg.Argv[0])
	}
	path, err := exec.LookPath(cfg.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	cfg.Argv = append([]string{path}, cfg.Argv[1:]...)
	if cfg.Name == "" {
		cfg.Name = filepath.Base(path)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	if cfg.MaxMemory > 0 && !rlimitSupported {
		return nil, fmt.Errorf("command %s: a memory cap needs Linux; set no cap (a negative MaxMemory) here", cfg.Name)
	}
	if cfg.Procs == 0 {
		cfg.Procs = 1
	}
	if cfg.MaxAnswer == 0 {
		cfg.MaxAnswer = DefaultMaxAnswer
	}
	for i := range cfg.MediaTypes {
		cfg.MediaTypes[i] = strings.ToLower(strings.TrimSpace(cfg.MediaTypes[i]))
	}
	// The body files' directory is made when a program first starts; a
	// temporary directory that cannot hold one is refused now, not at
	// every page.
	probe, err := os.MkdirTemp("", "weft-cmd-")
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", cfg.Name, err)
	}
	if err := os.Remove(probe); err != nil {
		return nil, fmt.Errorf("command %s: %w", cfg.Name, err)
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, slots: make(chan *proc, cfg.Procs), closed: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for range cfg.Procs {
		h.slots <- nil
	}
	return h, nil
}

// Name implements plugin.Handler.
func (h *Handler) Name() string { return h.cfg.Name }

// Accepts implements plugin.Handler.
func (h *Handler) Accepts(mt string) bool { return plugin.MatchType(h.cfg.MediaTypes, mt) }

// Stats returns the handler's totals so far.
func (h *Handler) Stats() Stats {
	return Stats{Requests: h.stats.requests.Load(), Failures: h.stats.failures.Load(), Starts: h.stats.starts.Load()}
}

// request is a line weft writes.
type request struct {
	V         int                 `json:"v"`
	ID        uint64              `json:"id"`
	URL       string              `json:"url"`
	MediaType string              `json:"media_type"`
	Header    map[string][]string `json:"header"`
	BodyFile  string              `json:"body_file"`
	BodyBytes int                 `json:"body_bytes"`
	Truncated string              `json:"truncated"`
}

// answer is a line the program writes.
type answer struct {
	ID      *uint64        `json:"id"`
	Links   []string       `json:"links"`
	Fields  map[string]any `json:"fields"`
	Follow  *bool          `json:"follow"`
	NoIndex bool           `json:"noindex"`
	Error   string         `json:"error"`
}

// Handle implements plugin.Handler: one request and its answer, on an
// idle process (started if need be). The wait for an idle process is
// bounded by the others' timeouts.
func (h *Handler) Handle(d *plugin.Response) (plugin.Result, error) {
	var p *proc
	select {
	case p = <-h.slots:
	case <-h.closed:
		return plugin.Result{}, errors.New("command: closed")
	}
	slot := p
	defer func() { h.slots <- slot }()
	h.stats.requests.Add(1)
	extra, err := h.ask(&slot, d)
	if err != nil {
		h.stats.failures.Add(1)
	}
	return extra, err
}

// ask sends d to *pp, starting it first if it is nil, and reads the
// answer; a process that failed is killed and *pp set to nil.
func (h *Handler) ask(pp **proc, d *plugin.Response) (plugin.Result, error) {
	if *pp == nil {
		p, err := h.start()
		if err != nil {
			return plugin.Result{}, err
		}
		*pp = p
	}
	p := *pp
	fail := func(format string, args ...any) (plugin.Result, error) {
		h.kill(p)
		*pp = nil
		return plugin.Result{}, fmt.Errorf("command %s: "+format, append([]any{h.cfg.Name}, args...)...)
	}
	if err := os.WriteFile(p.bodyFile, d.Body, 0o600); err != nil {
		return plugin.Result{}, fmt.Errorf("command %s: body file: %w", h.cfg.Name, err)
	}
	id := h.nextID.Add(1)
	line, err := json.Marshal(request{V: Version, ID: id, URL: d.URL, MediaType: d.MediaType, Header: d.Header,
		BodyFile: p.bodyFile, BodyBytes: len(d.Body), Truncated: d.Cut})
	if err != nil {
		return plugin.Result{}, fmt.Errorf("command %s: %w", h.cfg.Name, err)
	}
	timer := time.NewTimer(h.cfg.Timeout)
	defer timer.Stop()
	written := make(chan error, 1)
	go func() { // a program that reads nothing must not hold the worker past its timeout
		_, err := p.stdin.Write(append(line, '\n'))
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			return fail("writing the request: %v", err)
		}
	case <-timer.C:
		return fail("did not read the request within %v", h.cfg.Timeout)
	case <-h.closed:
		return fail("closed")
	}
	select {
	case l, ok := <-p.lines:
		if !ok {
			return fail("exited: %v", p.exitErr())
		}
		if l.err != nil {
			return fail("%v", l.err)
		}
		var a answer
		if err := json.Unmarshal(l.b, &a); err != nil {
			return fail("answer %.60q is not a JSON object of the protocol: %v", l.b, err)
		}
		if a.ID == nil || *a.ID != id {
			return fail("answered id %s to request %d: answers must come in order, one per request", idString(a.ID), id)
		}
		if a.Error != "" {
			return plugin.Result{}, fmt.Errorf("command %s: %s", h.cfg.Name, a.Error)
		}
		return plugin.Result{Links: a.Links, Fields: a.Fields, NoFollow: a.Follow != nil && !*a.Follow, NoIndex: a.NoIndex}, nil
	case <-timer.C:
		return fail("no answer within %v", h.cfg.Timeout)
	case <-h.closed:
		return fail("closed")
	}
}

func idString(id *uint64) string {
	if id == nil {
		return "none"
	}
	return strconv.FormatUint(*id, 10)
}

// proc is one running copy of the program.
type proc struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan line // answer lines; closed when the program's output ends
	bodyFile string
	waitErr  error // cmd.Wait's, once lines is closed
}

// line is a line of output, or why reading stopped.
type line struct {
	b   []byte
	err error
}

func (p *proc) exitErr() error {
	if p.waitErr == nil {
		return errors.New("exit status 0")
	}
	return p.waitErr
}

var procSeq atomic.Uint64

// start starts a copy of the program, its memory capped before the first
// request: what runs before that is its own start-up, which no crawled
// input reaches.
func (h *Handler) start() (*proc, error) {
	dir, err := h.bodyDir()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(h.cfg.Argv[0], h.cfg.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // killed with whatever it starts
	cmd.Stderr = &logWriter{log: h.log, name: h.cfg.Name}
	cmd.Env = append(os.Environ(), "WEFT_PROTOCOL="+strconv.Itoa(Version))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", h.cfg.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", h.cfg.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("command %s: start: %w", h.cfg.Name, err)
	}
	p := &proc{cmd: cmd, stdin: stdin, lines: make(chan line, 1),
		bodyFile: filepath.Join(dir, strconv.FormatUint(procSeq.Add(1), 10)+".body")}
	if h.cfg.MaxMemory > 0 {
		if err := limitMemory(cmd.Process.Pid, uint64(h.cfg.MaxMemory)); err != nil {
			h.kill(p)
			close(p.lines)
			return nil, fmt.Errorf("command %s: memory cap: %w", h.cfg.Name, err)
		}
	}
	h.stats.starts.Add(1)
	h.wg.Go(func() { h.read(p, stdout) })
	return p, nil
}

// read passes the program's output lines to p.lines until it ends, then
// reaps the process.
func (h *Handler) read(p *proc, stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		b, err := readLine(r, h.cfg.MaxAnswer)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				select {
				case p.lines <- line{err: err}:
				default:
				}
				h.kill(p) // nothing more of it can be read
			}
			break
		}
		select {
		case p.lines <- line{b: b}:
		default:
			// A line nobody asked for (two answers to one request):
			// the next request's id check catches what follows.
			select {
			case <-p.lines:
			default:
			}
			p.lines <- line{b: b}
		}
	}
	io.Copy(io.Discard, stdout)
	p.waitErr = p.cmd.Wait()
	close(p.lines)
}

// readLine reads a line of at most max bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		frag, err := r.ReadSlice('\n')
		out = append(out, frag...)
		if len(out) > max+1 {
			return nil, fmt.Errorf("an answer over %d bytes", max)
		}
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(out) > 0:
			return nil, errors.New("output ended inside a line")
		default:
			return nil, err
		}
	}
}

// kill ends p and what it started; its reader then reaps it.
func (h *Handler) kill(p *proc) {
	p.stdin.Close()
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Close stops every process and removes the body files; pages asked of
// the handler after it fail.
func (h *Handler) Close() error {
	h.once.Do(func() {
		close(h.closed)
		for range h.cfg.Procs {
			if p := <-h.slots; p != nil {
				h.kill(p)
			}
		}
		h.wg.Wait()
	})
	h.dirMu.Lock()
	defer h.dirMu.Unlock()
	h.gone = true
	if h.dir == "" {
		return nil
	}
	return os.RemoveAll(h.dir)
}

// logWriter logs a program's standard error, a line at a time, each cut
// at 1 KiB.
type logWriter struct {
	log  *slog.Logger
	name string
	buf  []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			if len(w.buf) > 1<<10 {
				w.emit(w.buf)
				w.buf = w.buf[:0]
			}
			return len(b), nil
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

func (w *logWriter) emit(b []byte) {
	w.log.Info("command handler says", "handler", w.name, "line", string(b[:min(len(b), 1<<10)]))
}

var _ plugin.Handler = (*Handler)(nil)
