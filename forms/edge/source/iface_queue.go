package source

// edge.queue@1.0.0 (spec/host-api-v1alpha3.md §7.1).

// queueMessageBody is a message body: encoded bytes whose data ceiling is
// the base64 length of maxMessageBytes.
func (e Edition) queueMessageBody() M { return encodedBytes(base64Len(e.queueMessageBytes())) }

func (e Edition) edgeQueue() Interface {
	body := e.queueMessageBody()
	delay := integer(0, 43200)
	id := text(1, 256)
	message := closed(M{"body": body, "delaySeconds": delay}, "body")
	settle := errs("unknown_batch", "unknown_message", "already_settled", "backend_unavailable")
	settleAll := errs("unknown_batch", "backend_unavailable")
	return interfaceDoc("edge.queue", "Queue (at-least-once, unordered)",
		"Asynchronous submission of messages and their consumption in batches, with at-least-once delivery and "+
			"no ordering guarantee. A message body is OPAQUE BYTES in the family's encoded-bytes shape "+
			"{\"encoding\": \"base64\", \"data\": \"…\"}; maxMessageBytes limits the DECODED length, and a longer "+
			"message fails with message_too_large. A messageId is issued by the host, opaque, unique within the "+
			"queue for as long as the message lives, and STABLE across redeliveries, so a consumer can deduplicate "+
			"on it. timestampMillis is the UTC instant, in milliseconds since the Unix epoch, at which the host "+
			"ACCEPTED the message; redelivery does not change it. attempts is 1 on a message's first delivery and "+
			"grows by one with each redelivery. A resolved send means ACCEPTED and durable, never delivered: "+
			"delivery happens later, at least once, possibly more than once and possibly out of send order, so "+
			"consumers must be idempotent. Consuming is not a binding but the Queue Consumer attachment, whose "+
			"maxBatchSize, maxBatchTimeoutSeconds, maxRetries, retryDelaySeconds, maxConcurrency and optional "+
			"dead-letter queue parameterise every rule here. Messages are settled one at a time or per batch: "+
			"acknowledge marks one message delivered and it is never redelivered; retry puts one message back, "+
			"delayed by delaySeconds when given and by the consumer's retryDelaySeconds otherwise; acknowledgeAll "+
			"and retryAll settle every message of the batch not yet settled. A handler that returns normally "+
			"without settling anything acknowledges the WHOLE batch. A handler that throws, or whose returned "+
			"promise rejects, retries every message of the batch that was not already acknowledged explicitly; "+
			"acknowledgements made before the throw stand. maxRetries counts REDELIVERIES only: the first delivery "+
			"is not counted, so a message is delivered at most 1 + maxRetries times, and maxRetries 0 means one "+
			"delivery and no retry. A message that exhausts its retries moves to the consumer's dead-letter queue "+
			"when one is declared and is dropped otherwise. The dead-letter copy is a NEW message on that queue, "+
			"with a new messageId, a new timestampMillis for the moment it was accepted there, and attempts "+
			"starting again at 1; this contract keeps no portable link back to the original. A queue has AT MOST "+
			"ONE consumer: two would split the stream between two retry policies and two dead-letter destinations "+
			"and leave the queue's own behaviour impossible to state, so the host refuses a second attachment. The "+
			"fixtures below cover only what one client can prove with no consumer and no waiting; delivery, retry, "+
			"dead-lettering and attempt counting are HOST OBLIGATIONS stated in the Host API specification.",
		[]any{
			operation("send",
				"Submits one message, optionally delayed before it becomes deliverable. The body uses the family's "+
					"encoded-bytes shape and maxMessageBytes limits its decoded length. A resolved send means the "+
					"host accepted and durably stored the message; it says nothing about any consumer having seen "+
					"it, or seeing it within any bound this contract states.",
				message, closed(M{"messageId": id}, "messageId"),
				errs("invalid_body", "message_too_large", "backend_unavailable"), notIdempotent),
			operation("sendBatch",
				"Submits an ordered batch of messages. Acceptance is all or nothing: when sendBatch is refused, "+
					"none of its messages was stored. messageIds comes back in exactly the order the messages were "+
					"given. Acceptance order is not delivery order: the queue promises no ordering at all.",
				closed(M{"messages": array(message, "minItems", 1, "maxItems", 100)}, "messages"),
				closed(M{"messageIds": array(id, "minItems", 1, "maxItems", 100)}, "messageIds"),
				errs("invalid_body", "message_too_large", "batch_too_large", "backend_unavailable"), notIdempotent),
			operation("acknowledge",
				"Marks one message of the batch this invocation is handling as delivered: it is never redelivered "+
					"and never dead-lettered. batchId is the identity the delivered batch carried and messageId must "+
					"be one of that batch's messages; anything else fails with unknown_batch or unknown_message. "+
					"Settling the same message twice fails with already_settled, so a double acknowledgement is an "+
					"error rather than a silent no-op that would hide a handler bug.",
				closed(M{"batchId": id, "messageId": id}, "batchId", "messageId"), empty(), settle, notIdempotent),
			operation("retry",
				"Puts one message of this batch back on the queue for redelivery and increments its attempts. "+
					"delaySeconds replaces the consumer's retryDelaySeconds for this message only. A message whose "+
					"attempts already equals 1 + maxRetries is dead-lettered or dropped instead of redelivered, "+
					"exactly as an unhandled failure would leave it.",
				closed(M{"batchId": id, "delaySeconds": delay, "messageId": id}, "batchId", "messageId"), empty(),
				settle, notIdempotent),
			operation("acknowledgeAll",
				"Marks every not-yet-settled message of this batch as delivered. Messages already settled by "+
					"acknowledge or retry keep the outcome they were given; this operation never reverses one.",
				closed(M{"batchId": id}, "batchId"), empty(), settleAll, notIdempotent),
			operation("retryAll",
				"Puts every not-yet-settled message of this batch back on the queue, incrementing the attempts of "+
					"each. It does exactly what an uncaught handler exception does, offered as an operation so that "+
					"a handler which caught its own error can choose the same outcome on purpose.",
				closed(M{"batchId": id, "delaySeconds": delay}, "batchId"), empty(), settleAll, notIdempotent),
		},
		M{"consistency": "eventual", "delivery": "at_least_once", "ordering": "none"},
		M{"maxBatchMessages": 100, "maxDelaySeconds": 43200, "maxMessageBytes": e.queueMessageBytes()},
		[]any{
			fixture("send-accepted",
				step("send", M{"body": M{"data": "eyJldmVudCI6InVzZXIuY3JlYXRlZCJ9", "encoding": "base64"}})),
			fixture("send-batch-accepted",
				step("sendBatch", M{"messages": []any{
					M{"body": M{"data": "Zmlyc3Q=", "encoding": "base64"}},
					M{"body": M{"data": "c2Vjb25k", "encoding": "base64"}, "delaySeconds": 30},
				}})),
			fixture("settling-an-undelivered-batch-is-refused",
				step("acknowledge", M{"batchId": "batch-that-was-never-delivered", "messageId": "message-1"},
					"expectedError", "unknown_batch"),
				step("retryAll", M{"batchId": "batch-that-was-never-delivered"}, "expectedError", "unknown_batch")),
		})
}
