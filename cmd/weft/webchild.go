package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// webChild is a synthetic web run in a child process of this binary (the
// hidden synthweb and synthhosts commands), so that its CPU and memory are
// not charged to the crawler. The child writes JSON values on its stdout
// (what it serves when it is up, and whatever it reports as it ends) and
// ends when its stdin closes. It is not tied to a context: on Ctrl-C the
// web outlives the crawl's shutdown, so that what it counted can still be
// read.
type webChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *json.Decoder
}

// startWebChild starts this binary with args, its stderr on stderr, and
// decodes the child's first JSON value into info: the web is serving.
func startWebChild(what string, args []string, stderr io.Writer, info any) (*webChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start the web: %w", what, err)
	}
	w := &webChild{cmd: cmd, stdin: stdin, out: json.NewDecoder(bufio.NewReader(stdout))}
	if err := w.out.Decode(info); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%s: the web did not start: %w", what, err)
	}
	return w, nil
}

// stop closes the child's stdin, decodes what it writes as it ends into
// report (nil: nothing is read), waits for it and returns its CPU time.
func (w *webChild) stop(report any) (time.Duration, error) {
	w.stdin.Close()
	var err error
	if report != nil {
		err = w.out.Decode(report)
	}
	w.cmd.Wait()
	if w.cmd.ProcessState == nil {
		return 0, err
	}
	return w.cmd.ProcessState.UserTime() + w.cmd.ProcessState.SystemTime(), err
}
