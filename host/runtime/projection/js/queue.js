// edge.queue producer projection, binding module-worker.queue-producer
// (spec/runtime-v1.md §5.4): makeQueue(fetcher) is env.NAME with exactly
// send and sendBatch. A body is bytes (ArrayBuffer, a view's window, a
// string as UTF-8); resolving means accepted and durable, to the
// host-assigned message id (send) or ids in order (sendBatch, all or
// nothing). Failures reject with an Error named for the edge.queue code.
import { arity, base64, bytes, options, send } from "./common.js";

function delayOf(method, d) {
  if (d === undefined) return undefined;
  if (!Number.isInteger(d) || d < 0 || d > 43200) throw new TypeError(`${method}: delaySeconds is an integer from 0 to 43200`);
  return d;
}

export function makeQueue(fetcher) {
  return Object.freeze({
    async send(...args) {
      arity("send", args, 2);
      const body = bytes(args[0], "invalid_body", "a message body");
      const o = options("send", args[1], ["delaySeconds"]);
      const delay = delayOf("send", o.delaySeconds);
      const path = delay === undefined ? "/queue/v1/send" : `/queue/v1/send?delay=${delay}`;
      const res = await send(fetcher, "POST", path, { body, headers: { "content-type": "application/octet-stream" } });
      return (await res.json()).id;
    },
    async sendBatch(...args) {
      arity("sendBatch", args, 1);
      const [messages] = args;
      if (!Array.isArray(messages) || messages.length === 0) throw new TypeError("sendBatch takes a non-empty array of {body, delaySeconds?}");
      const list = messages.map((m, i) => {
        if (m === undefined) throw new TypeError(`sendBatch messages[${i}] is {body, delaySeconds?}`);
        const o = options(`sendBatch messages[${i}]`, m, ["body", "delaySeconds"]);
        const out = { body: base64(bytes(o.body, "invalid_body", `messages[${i}].body`)) };
        const delay = delayOf(`sendBatch messages[${i}]`, o.delaySeconds);
        if (delay !== undefined) out.delaySeconds = delay;
        return out;
      });
      const res = await send(fetcher, "POST", "/queue/v1/batch", {
        body: JSON.stringify({ messages: list }), headers: { "content-type": "application/json" } });
      return (await res.json()).ids;
    },
  });
}
