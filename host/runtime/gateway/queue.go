package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/takoform/takoform/host/store"
)

// edge.queue producer limits of the v1alpha1 family, enforced exactly
// (spec/runtime-v1.md §5.4, §6); the v1beta1 group's message limit is
// MaxQueueMessageBytesV1beta1 (spec/lane-v1beta1.md §7.1).
const (
	MaxQueueMessageBytes = 131072
	MaxQueueBatch        = 100
	MaxQueueDelaySeconds = 43200
)

type queueHandler struct {
	g      *Gateway
	tenant string
}

// outgoing is one message to store: its bytes and delay (nil: the
// queue's deliveryDelaySeconds).
type outgoing struct {
	body  []byte
	delay *int64
}

func parseDelay(s string) (*int64, *Error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > MaxQueueDelaySeconds {
		return nil, invalidArgument("delaySeconds is an integer from 0 to %d", MaxQueueDelaySeconds)
	}
	return &n, nil
}

func tooLarge(n int) *Error {
	return errorf(http.StatusRequestEntityTooLarge, "message_too_large", "a message body is at most %d bytes; this one has %d", MaxQueueMessageBytes, n)
}

// send answers POST /queue/v1/send[?delay=N] with the raw body: {"id"}.
func (h *queueHandler) send(w http.ResponseWriter, r *http.Request) {
	uid, e := h.g.bindingUID(r, h.tenant, KindQueue)
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	m := outgoing{}
	for name, vals := range r.URL.Query() {
		if name != "delay" || len(vals) != 1 {
			h.g.writeError(w, invalidArgument("send takes delaySeconds only"))
			return
		}
		if m.delay, e = parseDelay(vals[0]); e != nil {
			h.g.writeError(w, e)
			return
		}
	}
	if r.ContentLength > MaxQueueMessageBytes {
		h.g.writeError(w, tooLarge(int(r.ContentLength)))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxQueueMessageBytes+1))
	if err != nil {
		h.g.writeError(w, errorf(http.StatusBadRequest, "invalid_body", "the body could not be read: %v", err))
		return
	}
	if len(body) > MaxQueueMessageBytes {
		h.g.writeError(w, errorf(http.StatusRequestEntityTooLarge, "message_too_large", "a message body is at most %d bytes; this one is longer", MaxQueueMessageBytes))
		return
	}
	m.body = body
	ids, err := h.store(r, uid, []outgoing{m})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.queueSent()
	h.g.writeJSON(w, map[string]string{"id": ids[0]})
}

// batch answers POST /queue/v1/batch {"messages":[{"body":"<base64>",
// "delaySeconds"?}]} with {"ids"}, all or nothing.
func (h *queueHandler) batch(w http.ResponseWriter, r *http.Request) {
	uid, e := h.g.bindingUID(r, h.tenant, KindQueue)
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	const maxRequest = MaxQueueBatch * (MaxQueueMessageBytes*4/3 + 64)
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(raw) > maxRequest {
		h.g.writeError(w, errorf(http.StatusRequestEntityTooLarge, "batch_too_large", "a batch carries at most %d messages of at most %d bytes each", MaxQueueBatch, MaxQueueMessageBytes))
		return
	}
	var req struct {
		Messages []struct {
			Body         string           `json:"body"`
			DelaySeconds *json.RawMessage `json:"delaySeconds"`
		} `json:"messages"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		h.g.writeError(w, invalidArgument("sendBatch takes [{body, delaySeconds?}, …]: %v", err))
		return
	}
	switch n := len(req.Messages); {
	case n == 0:
		h.g.writeError(w, invalidArgument("sendBatch takes 1 to %d messages; it got none", MaxQueueBatch))
		return
	case n > MaxQueueBatch:
		h.g.writeError(w, errorf(http.StatusRequestEntityTooLarge, "batch_too_large", "a batch holds at most %d messages; this one has %d", MaxQueueBatch, n))
		return
	}
	msgs := make([]outgoing, len(req.Messages))
	for i, m := range req.Messages {
		body, err := base64.StdEncoding.Strict().DecodeString(m.Body)
		if err != nil {
			h.g.writeError(w, invalidArgument("messages[%d].body is not base64", i))
			return
		}
		if len(body) > MaxQueueMessageBytes {
			h.g.writeError(w, tooLarge(len(body)))
			return
		}
		msgs[i].body = body
		if m.DelaySeconds != nil {
			if msgs[i].delay, e = parseDelay(string(*m.DelaySeconds)); e != nil {
				h.g.writeError(w, e)
				return
			}
		}
	}
	ids, err := h.store(r, uid, msgs)
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	h.g.queueSent()
	h.g.writeJSON(w, map[string][]string{"ids": ids})
}

// store makes msgs durable in one transaction and returns their ids
// (spec/runtime-v1.md §5.4: resolving means accepted and durable).
func (h *queueHandler) store(r *http.Request, uid string, msgs []outgoing) ([]string, error) {
	now := h.g.now().Truncate(time.Millisecond)
	ids := make([]string, len(msgs))
	for i := range ids {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		ids[i] = "msg_" + hex.EncodeToString(b)
	}
	err := h.g.store.Update(r.Context(), func(tx store.Tx) error {
		res, e := h.g.resolve(tx, h.tenant, KindQueue, uid)
		if e != nil {
			return e
		}
		// The bodies were held to v1alpha1's limit, the larger, before
		// the transaction; a v1beta1 queue's is smaller.
		limit := limitsOf(res.APIVersion).queueMessageBytes
		for _, m := range msgs {
			if len(m.body) > limit {
				return errorf(http.StatusRequestEntityTooLarge, "message_too_large",
					"a message body of a %s queue is at most %d bytes; this one has %d", res.APIVersion, limit, len(m.body))
			}
		}
		var spec struct {
			DeliveryDelaySeconds int64 `json:"deliveryDelaySeconds"`
		}
		if err := json.Unmarshal(res.Spec, &spec); err != nil {
			return err
		}
		out := make([]*store.QueueMessage, len(msgs))
		for i, m := range msgs {
			delay := spec.DeliveryDelaySeconds
			if m.delay != nil {
				delay = *m.delay
			}
			out[i] = &store.QueueMessage{Tenant: h.tenant, Queue: uid, ID: ids[i], Body: m.body,
				AcceptedAt: now, DeliverableAt: now.Add(time.Duration(delay) * time.Second)}
		}
		if err := tx.QueueSend(out); err != nil {
			return err
		}
		u, err := tx.Usage(h.tenant)
		if err != nil {
			return err
		}
		if u.QueueBytes > h.g.queueLimit {
			return errorf(http.StatusRequestEntityTooLarge, "message_too_large",
				"this send would bring the tenant's stored queue messages to %d bytes, over the host's limit of %d bytes; let consumers drain the queue or ask the host's operator to raise the limit",
				u.QueueBytes, h.g.queueLimit)
		}
		return nil
	})
	return ids, err
}
