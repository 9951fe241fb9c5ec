package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reads of a partition's past must see every write acknowledged before
// them: a takeover that missed the old owner's last visits would fetch
// those pages again, and one that read an old snapshot record would
// replay logs its successor purged, losing URLs.
//
// A JetStream consumer (a KV watch is one) reads the copy of the stream on
// the server it was placed on, which for a consumer of one replica is any
// of the stream's peers; a follower may not have applied the last writes
// the leader acknowledged. (Measured on a three-server cluster: 1 to 2 %
// of replays started just after a publish missed it.) So every such read
// is bounded by the answer of the stream's leader, which alone answers the
// message API that is not "direct": the subject's last message.

// kvStream and kvSubject name the stream behind a KV bucket and a key's
// subject in it.
func kvStream(bucket string) string       { return "KV_" + bucket }
func kvSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// kvDeleted reports whether a KV stream's message is a delete or a purge
// marker.
func kvDeleted(h nats.Header) bool {
	op := h.Get("KV-Operation")
	return op == "DEL" || op == "PURGE"
}

// storedMsg is a message as the message API returns it.
type storedMsg struct {
	Subject  string `json:"subject"`
	Sequence uint64 `json:"seq"`
	Header   []byte `json:"hdrs,omitempty"`
	Data     []byte `json:"data,omitempty"`
}

// leaderLast returns the last message of subject (wildcards allowed) in
// stream as its leader has it, or ok false if there is none.
func (n *Node) leaderLast(ctx context.Context, stream, subject string) (m storedMsg, h nats.Header, ok bool, err error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	msg, err := n.js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return m, nil, false, fmt.Errorf("last message of %s in %s: %w", subject, stream, err)
	}
	var resp struct {
		Message *storedMsg `json:"message"`
		Error   *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return m, nil, false, fmt.Errorf("last message of %s in %s: %w", subject, stream, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return m, nil, false, nil
	case resp.Error != nil:
		return m, nil, false, fmt.Errorf("last message of %s in %s: %s (%d)", subject, stream, resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return m, nil, false, fmt.Errorf("last message of %s in %s: an answer without one", subject, stream)
	}
	m = *resp.Message
	if len(m.Header) > 0 {
		if h, err = nats.DecodeHeadersMsg(m.Header); err != nil {
			return m, nil, false, fmt.Errorf("last message of %s in %s: %w", subject, stream, err)
		}
	}
	return m, h, true, nil
}
