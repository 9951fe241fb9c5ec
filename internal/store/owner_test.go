package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A second Open of a directory that is open is refused with an
// *InUseError that says who holds it, whatever the mode; once the first
// closes, the note is gone and the directory opens again.
func TestSecondOpenSaysWhoHoldsIt(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*Options{nil, {ReadOnly: true}, {Fresh: true}} {
		_, err := Open(dir, opts)
		var iu *InUseError
		if !errors.As(err, &iu) || iu.Owner == nil {
			t.Fatalf("second Open (%+v): %v, want an *InUseError with its owner", opts, err)
		}
		if iu.Owner.PID != os.Getpid() || !strings.HasPrefix(iu.Owner.Command, filepath.Base(os.Args[0])+" ") || time.Since(iu.Owner.Started) > time.Minute {
			t.Errorf("owner %+v, want this process (pid %d), its command and a recent start", iu.Owner, os.Getpid())
		}
		if msg := err.Error(); !strings.Contains(msg, dir+" is in use by another process (pid "+fmt.Sprint(os.Getpid())+", started ") {
			t.Errorf("error %q does not name the directory and the owner", msg)
		}
	}
	// Fresh, refused, touched nothing.
	b := db.NewBatch()
	b.PutMeta("k", []byte("v"))
	commit(t, b)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ownerNote)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the owner note outlived Close: %v", err)
	}
	db, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if v, ok, err := db.GetMeta("k"); !ok || string(v) != "v" || err != nil {
		t.Errorf("GetMeta = %q, %v, %v, want what was written", v, ok, err)
	}
	db.Close()
}

// Fresh starts the store over, keeping nothing of what it held.
func TestFreshStartsOver(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.PutMeta("k", []byte("v"))
	commit(t, b)
	db.Flush()
	db.Close()
	db, err = Open("/db", &Options{FS: fs, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, err := db.GetMeta("k"); ok || err != nil {
		t.Errorf("GetMeta after Fresh = %v, %v; want nothing", ok, err)
	}
}

const holdChildEnv = "WEFT_STORE_HOLD_CHILD_DIR"

// TestHoldChild is the child of TestOwnerIsAnotherProcess: it opens the
// store, says so, and holds it until its stdin closes or it is killed.
func TestHoldChild(t *testing.T) {
	dir := os.Getenv(holdChildEnv)
	if dir == "" {
		t.Skip("helper process for TestOwnerIsAnotherProcess")
	}
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("open")
	io.Copy(io.Discard, os.Stdin)
	db.Close()
}

// The owner of a store held by another process is that process, its
// command line without its secrets; killed, it leaves a stale note, which
// does not keep the next process out: the lock decides, and the kernel
// dropped it.
func TestOwnerIsAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldChild$", "-test.count=1", "--", "--http-token", "s3cret", "--s3-secret=hush")
	cmd.Env = append(os.Environ(), holdChildEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	opened := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "open" {
				opened <- true
			}
		}
		close(opened)
	}()
	select {
	case ok := <-opened:
		if !ok {
			cmd.Wait()
			t.Fatal("the child ended without opening the store")
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child did not open the store within a minute")
	}

	_, err = Open(dir, nil)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.Owner == nil {
		t.Fatalf("Open of the child's store: %v, want an *InUseError with its owner", err)
	}
	if iu.Owner.PID != cmd.Process.Pid {
		t.Errorf("owner pid %d, want the child's %d", iu.Owner.PID, cmd.Process.Pid)
	}
	if c := iu.Owner.Command; !strings.Contains(c, "-test.run=^TestHoldChild$") || !strings.Contains(c, "--http-token *** --s3-secret=***") || strings.Contains(c, "s3cret") || strings.Contains(c, "hush") {
		t.Errorf("owner's command %q: want the child's, its secrets left out", c)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if stale := readOwner(vfs.Default, dir); stale == nil || stale.PID != cmd.Process.Pid {
		t.Fatalf("the killed child's note: %+v, want it left behind", stale)
	}
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v; a stale note must not keep anyone out", err)
	}
	defer db.Close()
	if o := readOwner(vfs.Default, dir); o == nil || o.PID != os.Getpid() {
		t.Errorf("note after reopening: %+v, want this process's", o)
	}
}

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"/usr/local/bin/weft", "crawl", "--data", "d", "https://a.test/"}, "weft crawl --data d https://a.test/"},
		{[]string{"weft", "serve", "--http-token", "t0k", "--http", ":8080"}, "weft serve --http-token *** --http :8080"},
		{[]string{"weft", "crawl", "--http-token=t0k", "-api-key", "k", "--keep"}, "weft crawl --http-token=*** -api-key *** --keep"},
		{[]string{"weft", "crawl", "--header", "X-Token: t0k", "--header=Authorization: Bearer t0k", "--webhook-header", "X: t0k", "--header-timeout", "5s"},
			"weft crawl --header *** --header=*** --webhook-header *** --header-timeout 5s"},
		{[]string{"weft", strings.Repeat("x", 400)}, "weft " + strings.Repeat("x", maxCommandLine-5) + "..."},
	} {
		if got := commandLine(tc.args); got != tc.want {
			t.Errorf("commandLine(%.60q) = %.80q, want %.80q", tc.args, got, tc.want)
		}
	}
}
