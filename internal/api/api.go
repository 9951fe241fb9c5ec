// Package api serves a running crawl to its operators over HTTP: a JSON
// API under /v1 (described by the OpenAPI document at /v1/openapi.json),
// and Prometheus metrics at /metrics.
//
// Every mutating endpoint requires the bearer token, compared in constant
// time; when the server listens on anything but loopback, every endpoint
// does, and the server refuses to start without a token. Request bodies
// are capped. Errors are JSON with a stable code:
//
//	{"error": {"code": "unauthorized", "message": "..."}}
package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/weft-crawler/weft/internal/history"
)

// Config configures a Server.
type Config struct {
	// Addr is the address to listen on, host:port; port 0 picks one.
	Addr string
	// Token is the bearer token. Mutating endpoints always require it;
	// every endpoint does when Addr is not a loopback address, and then
	// it must be set.
	Token string
	// MaxBody caps request bodies; zero means 1 MiB.
	MaxBody int64
	// LeaseTTL is how long an external fetcher's lease lasts before its
	// URL and host go back to the frontier; zero means a minute.
	LeaseTTL time.Duration
	// SeedRate and SeedBurst limit POST /v1/seeds per client address;
	// zero means 2 a second, bursts of 10.
	SeedRate  float64
	SeedBurst int
	// Cluster, for a node of a crawl spread over several, says which
	// partitions the node holds: /v1/stats and /metrics show them.
	Cluster ClusterNode
	// HistoryInterval is the interval of GET /v1/history's fine samples
	// (an hour of them is kept, and a day of 30 times as long); zero means
	// 10 s.
	HistoryInterval time.Duration
	Logger          *slog.Logger
}

// ClusterNode is what the API shows of a node of a cluster.
type ClusterNode interface {
	Name() string
	Owned() map[int]uint64 // partition -> epoch of its lease
	Handoffs() int         // partitions taken or given up so far
	Snapshots() int64      // snapshots of its partitions' logs made so far
	PartitionCount() int   // P
	// Members lists the cluster's live nodes, for GET /v1/cluster.
	Members(ctx context.Context) ([]ClusterMember, error)
}

// Server is the operator API of one crawl.
type Server struct {
	cfg       Config
	res       Resources
	loopback  bool
	mux       *http.ServeMux
	metrics   http.Handler
	idem      idempotency
	seedLimit limiters
	cursorKey [32]byte // signs /v1/urls cursors; made anew at each start
	srv       *http.Server
	ln        net.Listener
	done      chan error
	sampler   sampler
	// drainMax and drainTime bound what is read of a body over the cap
	// (tooLarge): drainBytes and drainWait, but in tests.
	drainMax  int64
	drainTime time.Duration
}

// A body over the cap is read and discarded, up to drainBytes more and
// for drainWait at most, before its 413 is sent and the connection
// closed: enough for a client that writes a body of several MiB by
// mistake before reading (most do) to get the answer, and not so much
// that a client sending without end holds the server.
const (
	drainBytes = 8 << 20
	drainWait  = 5 * time.Second
)

// route is an endpoint: the mux pattern, and what the OpenAPI document
// must say of it (TestOpenAPIInSync holds them together).
type route struct {
	method, path string
	mutating     bool
	handle       func(s *Server, w http.ResponseWriter, r *http.Request) error
}

var routes = []route{
	{http.MethodGet, "/v1/stats", false, (*Server).stats},
	{http.MethodGet, "/v1/history", false, (*Server).history},
	{http.MethodGet, "/v1/cluster", false, (*Server).cluster},
	{http.MethodPost, "/v1/seeds", true, (*Server).addSeeds},
	{http.MethodGet, "/v1/seeds", false, (*Server).seedList},
	{http.MethodPost, "/v1/frontier/lease", true, (*Server).lease},
	{http.MethodPost, "/v1/frontier/complete", true, (*Server).complete},
	{http.MethodPost, "/v1/pause", true, (*Server).pauseCrawl},
	{http.MethodPost, "/v1/resume", true, (*Server).resumeCrawl},
	{http.MethodGet, "/v1/hosts", false, (*Server).hosts},
	{http.MethodGet, "/v1/fetches", false, (*Server).fetches},
	{http.MethodGet, "/v1/hosts/{host}", false, (*Server).host},
	{http.MethodGet, "/v1/urls", false, (*Server).urls},
	{http.MethodGet, "/v1/pages/{url_hash}", false, (*Server).page},
	{http.MethodGet, "/v1/policies/{host}", false, (*Server).getPolicy},
	{http.MethodPut, "/v1/policies/{host}", true, (*Server).putPolicy},
	{http.MethodDelete, "/v1/policies/{host}", true, (*Server).deletePolicy},
	{http.MethodPost, "/v1/hosts/{host}/pause", true, holdHost(true)},
	{http.MethodPost, "/v1/hosts/{host}/resume", true, holdHost(false)},
	{http.MethodGet, "/v1/openapi.json", false, (*Server).openAPI},
	{http.MethodGet, "/metrics", false, (*Server).serveMetrics},
}

//go:embed openapi.json
var openAPIDoc []byte

// New checks cfg and returns a server of res; Start starts it. New calls
// none of res, so a configuration can be checked with the zero Resources
// before there is a crawl to serve.
func New(cfg Config, res Resources) (*Server, error) {
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = time.Minute
	}
	if cfg.SeedRate <= 0 {
		cfg.SeedRate = 2
	}
	if cfg.SeedBurst <= 0 {
		cfg.SeedBurst = 10
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen address %q: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, res: res, loopback: isLoopback(host), mux: http.NewServeMux(),
		seedLimit: limiters{rate: rate.Limit(cfg.SeedRate), burst: cfg.SeedBurst}, drainMax: drainBytes, drainTime: drainWait}
	s.sampler.ring = history.New(history.Config{Fine: cfg.HistoryInterval})
	rand.Read(s.cursorKey[:]) // crypto/rand.Read never returns an error
	if !s.loopback && cfg.Token == "" {
		return nil, fmt.Errorf("api: listen address %q is not loopback: a token is required (--http-token, --http-token-file or WEFT_HTTP_TOKEN)", cfg.Addr)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &collector{c: res.Crawl, cluster: cfg.Cluster})
	s.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)})
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.path, s.endpoint(rt))
	}
	s.serveDashboard()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r, false) {
			writeError(w, errUnauthorized)
			return
		}
		var allow []string
		for _, rt := range routes {
			if rt.path == r.URL.Path {
				allow = append(allow, rt.method)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: r.Method + " " + r.URL.Path + ": allowed " + strings.Join(allow, ", ")})
			return
		}
		writeError(w, &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no endpoint " + r.Method + " " + r.URL.Path})
	})
	return s, nil
}

// isLoopback reports whether a listen host binds loopback only: an empty
// host or an unspecified address binds every interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// localHost reports whether a Host header names this machine's loopback:
// localhost or a loopback address, with any port.
func localHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return isLoopback(strings.Trim(host, "[]"))
}

// Handler is the server's handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.mux }

// Start listens on Config.Addr and serves until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn)}
	s.done = make(chan error, 1)
	go func() { s.done <- s.srv.Serve(ln) }()
	s.startSampler()
	return nil
}

// Addr is the address the server listens on, once started.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting requests in progress finish until ctx
// is done.
func (s *Server) Close(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	s.stopSampler()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// endpoint wraps a route with authorization, the body cap and errors.
func (s *Server) endpoint(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r, rt.mutating) {
			writeError(w, errUnauthorized)
			return
		}
		body := r.Body
		if r.ContentLength > s.cfg.MaxBody {
			s.tooLarge(w, r, body)
			return
		}
		r.Body = http.MaxBytesReader(w, body, s.cfg.MaxBody)
		if err := rt.handle(s, w, r); err != nil {
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				s.tooLarge(w, r, body)
				return
			}
			writeError(w, err)
		}
	})
}

// tooLarge answers a request whose body is over the cap: 413 and
// Connection: close. Closing a connection with unread data makes the
// kernel reset it, and a client still writing its body, as most write it
// all before they read, then never reads the 413; so what the client
// goes on sending is read and discarded first, up to s.drainMax bytes
// and for s.drainTime at most. A client that asked to hear before it
// sends (Expect: 100-continue) is answered at once: reading would invite
// the body.
func (s *Server) tooLarge(w http.ResponseWriter, r *http.Request, body io.Reader) {
	if !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// Not every ResponseWriter has a connection to set a deadline
		// on (a test's recorder): its body is in memory.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.drainTime))
		io.CopyN(io.Discard, body, s.drainMax)
	}
	w.Header().Set("Connection", "close")
	writeError(w, errTooLarge(s.cfg.MaxBody))
}

// authorized reports whether r may be served: it carries the token, or
// it needs none (a read on a loopback-only server).
func (s *Server) authorized(r *http.Request, mutating bool) bool {
	if s.loopback && !mutating && localHost(r.Host) {
		// A page elsewhere that rebinds its name to 127.0.0.1 sends its
		// own name as Host: it reads nothing without the token.
		return true
	}
	if s.cfg.Token == "" {
		return false // a loopback server without a token serves reads only
	}
	got, ok := bearer(r.Header.Get("Authorization"))
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// bearer returns the token of an Authorization header of the Bearer
// scheme: credentials = auth-scheme 1*SP token68 (RFC 9110 §11.4), the
// scheme in any case (§11.1).
func bearer(h string) (string, bool) {
	scheme, rest, ok := strings.Cut(strings.Trim(h, " \t"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimLeft(rest, " ")
	return tok, tok != ""
}

// readJSON reads a request's JSON body into v: exactly one value, no field
// v lacks, nothing after it but white space. It returns the body. A fault
// is bad_json, its message led by what (the body's name).
func readJSON(r *http.Request, what string, v any) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err // a MaxBytesError becomes body_too_large
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if errors.Is(err, io.EOF) {
			msg = "the body is empty: want a JSON object"
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: what + ": " + msg}
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: fmt.Sprintf("%s: more after the JSON value, which ends at byte %d", what, end)}
	}
	return body, nil
}

// Error is an API error: an HTTP status, a stable code and a message.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

var errNotRunning = &Error{Status: http.StatusServiceUnavailable, Code: "not_running", Message: "the crawl is not running"}

var errUnauthorized = &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "a valid bearer token is required (Authorization: Bearer TOKEN)"}

func errTooLarge(max int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body over %d bytes", max)}
}

// writeError answers err: an *Error as it says, ErrNotRunning from a
// resource as errNotRunning (whichever resource said it), any other as an
// internal error.
func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if errors.Is(err, ErrNotRunning) {
		e = errNotRunning
	} else if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Code: "internal", Message: err.Error()}
	}
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
	}
	writeJSON(w, e.Status, map[string]*Error{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPIDoc)
	return err
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.ServeHTTP(w, r)
	return nil
}

func (s *Server) pauseCrawl(w http.ResponseWriter, _ *http.Request) error {
	s.res.Crawl.Pause()
	s.cfg.Logger.Info("crawl paused through the API")
	return writeJSON(w, http.StatusOK, map[string]bool{"paused": true})
}

func (s *Server) resumeCrawl(w http.ResponseWriter, _ *http.Request) error {
	s.res.Crawl.Resume()
	s.cfg.Logger.Info("crawl resumed through the API")
	return writeJSON(w, http.StatusOK, map[string]bool{"paused": false})
}
