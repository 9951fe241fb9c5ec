package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A JetStream cluster that has just started, or a stream or bucket that
// another node has just made, answers for a moment with errors that say
// "not yet": the meta leader does not know every peer yet ("no suitable
// peers for placement"), the new stream's group has no leader yet
// ("stream not found" right after it was made), the system is
// "temporarily unavailable", nobody answers the API at all. A node that
// starts then waits for what it needs instead of giving up.

// transient reports whether err is one of those: worth asking again.
func transient(err error) bool {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil {
		ae := je.APIError()
		return ae.Code == 503 || ae.ErrorCode == jetstream.JSErrCodeStreamNotFound || ae.ErrorCode == jsErrCodeClusterNoPeers
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, errRaced)
}

// jsErrCodeClusterNoPeers is nats-server's JSClusterNoPeersErrF, which
// nats.go does not name.
const jsErrCodeClusterNoPeers = 10005

// errRaced is an open-or-make that found the thing made by someone else
// between its two steps: opened again.
var errRaced = errors.New("made meanwhile by another node")

// Await calls fn until it returns nil, for as long as its error is
// transient and ctx is not done, each call with a deadline of its own: a
// start waits out a cluster getting ready. It says (Warn) what it waits
// for, at the first failure and then every few seconds, and returns an
// error naming what, how long it waited and the last error.
func Await(ctx context.Context, log *slog.Logger, what string, fn func(context.Context) error) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	var said time.Time
	wait := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		if !transient(err) || ctx.Err() != nil {
			if ctx.Err() != nil && transient(err) {
				return fmt.Errorf("jetstream: %s not ready after %v: %w", what, time.Since(start).Round(time.Millisecond), err)
			}
			return fmt.Errorf("jetstream: %s: %w", what, err)
		}
		if time.Since(said) > 5*time.Second {
			log.Warn("jetstream: waiting for "+what, "err", err, "waited", time.Since(start).Round(time.Millisecond))
			said = time.Now()
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(2*wait, time.Second)
	}
}

// OpenKV opens the bucket cfg names, made with cfg if it does not exist,
// once its stream's leader answers for it (Status): a bucket another node
// has just made may not have one yet. It waits as Await does.
func OpenKV(ctx context.Context, js jetstream.JetStream, log *slog.Logger, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := Await(ctx, log, "bucket "+cfg.Bucket, func(ctx context.Context) error {
		var err error
		kv, err = js.KeyValue(ctx, cfg.Bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			if kv, err = js.CreateKeyValue(ctx, cfg); errors.Is(err, jetstream.ErrBucketExists) {
				return errRaced
			}
		}
		if err != nil {
			return err
		}
		_, err = kv.Status(ctx)
		return err
	})
	return kv, err
}

// OpenStream opens the stream cfg names, made with cfg if it does not
// exist, once its leader answers for it (Info). It waits as Await does.
func OpenStream(ctx context.Context, js jetstream.JetStream, log *slog.Logger, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := Await(ctx, log, "stream "+cfg.Name, func(ctx context.Context) error {
		var err error
		st, err = js.Stream(ctx, cfg.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			if st, err = js.CreateStream(ctx, cfg); errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				return errRaced
			}
		}
		if err != nil {
			return err
		}
		_, err = st.Info(ctx)
		return err
	})
	return st, err
}

// OpenObjectStore opens the object store cfg names, made with cfg if it
// does not exist, once its stream's leader answers for it (Status). It
// waits as Await does.
func OpenObjectStore(ctx context.Context, js jetstream.JetStream, log *slog.Logger, cfg jetstream.ObjectStoreConfig) (jetstream.ObjectStore, error) {
	var obs jetstream.ObjectStore
	err := Await(ctx, log, "object store "+cfg.Bucket, func(ctx context.Context) error {
		var err error
		obs, err = js.ObjectStore(ctx, cfg.Bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			if obs, err = js.CreateObjectStore(ctx, cfg); errors.Is(err, jetstream.ErrBucketExists) {
				return errRaced
			}
		}
		if err != nil {
			return err
		}
		_, err = obs.Status(ctx)
		return err
	})
	return obs, err
}
