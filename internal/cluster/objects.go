package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream's object store as Snapshots.
type natsObjects struct{ obs jetstream.ObjectStore }

func (o natsObjects) Put(ctx context.Context, name string, r io.Reader, _ int64) error {
	_, err := o.obs.Put(ctx, jetstream.ObjectMeta{Name: name}, r)
	return err
}

func (o natsObjects) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	return o.obs.Get(ctx, name)
}

func (o natsObjects) String() string { return "JetStream object store " + ObjectsBucket }

func (o natsObjects) Delete(ctx context.Context, name string) error {
	if err := o.obs.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	return nil
}

// getObject opens a stored object of size bytes. Its reads end with ctx,
// or Config.objectIdle without a byte, and in any case once the object
// has had objectIdle plus its size at Config.objectRate: a store whose
// server went away may otherwise leave a read waiting for good, and the
// handoffs behind it.
//
// The last bound is the one a stalled read of JetStream's object store
// sees: nats.go waits for the next chunk until its context's deadline,
// seeing a cancel only between reads (so ctx's own deadline, minutes away
// for a takeover, is too far), and gives a context without a deadline 5 s
// for the whole object.
func (n *Node) getObject(ctx context.Context, name string, size int64) (io.ReadCloser, error) {
	idle := n.cfg.objectIdle
	budget := idle + time.Duration(float64(size)/n.cfg.objectRate*float64(time.Second))
	gctx, cancel := context.WithTimeout(ctx, budget)
	r, err := n.objects.Get(gctx, name)
	if err != nil {
		cancel()
		return nil, err
	}
	c := &idleReader{ReadCloser: r, cancel: cancel, every: idle}
	c.idle = time.AfterFunc(idle, cancel)
	return c, nil
}

type idleReader struct {
	io.ReadCloser
	cancel context.CancelFunc
	idle   *time.Timer
	every  time.Duration // the idle timer's span, reset by every byte
}

func (c *idleReader) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	if n > 0 {
		c.idle.Reset(c.every)
	}
	return n, err
}

func (c *idleReader) Close() error {
	c.idle.Stop()
	c.cancel()
	return c.ReadCloser.Close()
}

func fileSum(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), size, err
}

// dropObject deletes a snapshot object no record names, with a deadline
// of its own: a store that does not answer must not hold the partition's
// handoff.
func (n *Node) dropObject(ctx context.Context, name string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := n.objects.Delete(dctx, name); err != nil {
		n.log.Warn("cluster: a snapshot object no record names not deleted", "object", name, "err", err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
