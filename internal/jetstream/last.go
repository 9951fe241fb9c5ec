package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reads that must see every write acknowledged before them go to the
// stream's leader. A JetStream consumer (a KV watch is one) reads the copy
// of the stream on the server it was placed on, which for a consumer of
// one replica is any of the stream's peers, and a KV get is "direct",
// answered by any of them: a follower may not have applied the last
// writes the leader acknowledged. (Measured on a three-server cluster, in
// weft's cluster package: 1 to 2 % of log replays started just after a
// publish missed it, and 1 to 5 % of KV watches.) The message API that is
// not direct is answered by the leader alone, and a new leader answers
// only once it has applied everything committed before it was elected.

// StoredMsg is a message of a stream as the message API returns it.
type StoredMsg struct {
	Subject  string
	Sequence uint64
	Header   nats.Header
	Data     []byte
}

// KVStream and KVSubject name the stream behind a KV bucket and a key's
// subject in it.
func KVStream(bucket string) string       { return "KV_" + bucket }
func KVSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// KVDeleted reports whether a KV stream's message is a delete or a purge
// marker.
func KVDeleted(h nats.Header) bool {
	op := h.Get("KV-Operation")
	return op == "DEL" || op == "PURGE"
}

// LastMsg returns the last message of subject (wildcards allowed) in
// stream as its leader has it, or ok false if there is none. Each request
// has a deadline of its own: a leader that just died answers nothing
// until another is elected. A leader whose store is closing answers "not
// found" as if the subject had nothing, so that answer counts only once
// it is given twice, a moment apart.
func LastMsg(ctx context.Context, js jetstream.JetStream, stream, subject string) (m StoredMsg, ok bool, err error) {
	for try := 1; ; try++ {
		m, ok, err = lastMsgOnce(ctx, js, stream, subject)
		if err != nil || ok || try == 2 {
			return m, ok, err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return m, false, ctx.Err()
		}
	}
}

func lastMsgOnce(ctx context.Context, js jetstream.JetStream, stream, subject string) (StoredMsg, bool, error) {
	fail := func(err error) (StoredMsg, bool, error) {
		return StoredMsg{}, false, fmt.Errorf("jetstream: last message of %s in %s: %w", subject, stream, err)
	}
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := js.Conn().RequestWithContext(rctx, apiPrefix(js.Options())+"STREAM.MSG.GET."+stream, req)
	if err != nil {
		return fail(err)
	}
	var resp struct {
		Message *struct {
			Subject  string `json:"subject"`
			Sequence uint64 `json:"seq"`
			Header   []byte `json:"hdrs,omitempty"`
			Data     []byte `json:"data,omitempty"`
		} `json:"message"`
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fail(err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return StoredMsg{}, false, nil
	case resp.Error != nil:
		return fail(fmt.Errorf("%s (%d)", resp.Error.Description, resp.Error.ErrCode))
	case resp.Message == nil:
		return fail(fmt.Errorf("an answer without one"))
	}
	m := StoredMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Sequence, Data: resp.Message.Data}
	if len(resp.Message.Header) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return fail(err)
		}
	}
	return m, true, nil
}

// apiPrefix is the JetStream API's subject prefix for js's options, as
// nats.go makes it.
func apiPrefix(o jetstream.JetStreamOptions) string {
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return "$JS.API."
}
