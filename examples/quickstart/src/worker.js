// The quickstart worker, written to the runtime ABI (spec/runtime-v1.md):
// one ES module whose default export carries the three handlers main.tf
// declares (fetch, scheduled, queue). Bindings arrive on `env` under the
// names main.tf gives them: CACHE (edge.kv), MEDIA (edge.objects), DB
// (edge.sql of the v1beta1 family) and EVENTS (edge.queue producer).
import { render } from "./render.js";

// `make demo` rolls out changed code by editing this line.
const RELEASE = "quickstart v1";

// The table counters comes from migrations/0001_counters.sql, which the
// host applies before the deployment serves this code: v1beta1 worker code
// reads and writes rows but cannot change the schema.
const COUNT_VISIT =
  "INSERT INTO counters (name, value) VALUES (?1, 1) " +
  "ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value";

export default {
  // Serves the endpoint: /release names the code that answers (counting
  // nothing); /media/KEY answers an object of the bucket; any other path
  // counts a visit in KV and in SQLite, queues an event and answers with
  // both counts.
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/release") return new Response(RELEASE + "\n");
    if (url.pathname.startsWith("/media/")) {
      const object = await env.MEDIA.get(decodeURIComponent(url.pathname.slice("/media/".length)));
      if (object === null) return new Response("not found\n", { status: 404 });
      return new Response(object.body, {
        headers: { "content-type": object.contentType ?? "application/octet-stream" },
      });
    }

    // KV holds bytes: get resolves to an ArrayBuffer (null when absent),
    // put takes a string (stored as its UTF-8 bytes). KV is eventually
    // consistent and last-writer-wins, so this count is approximate under
    // concurrent visits.
    const stored = await env.CACHE.get("visits");
    const kv = (stored === null ? 0 : Number(new TextDecoder().decode(stored))) + 1;
    await env.CACHE.put("visits", String(kv));

    // SQL values are plain JSON values both ways (null, a number, a string;
    // bytes as {encoding: "base64", data}); a row is an object, column
    // name → value. The upsert is atomic, so this count is exact.
    const { rows } = await env.DB.execute(COUNT_VISIT, ["visits"]);
    const sql = rows[0].value;

    // Accepted and durable once send resolves; the consumer below drains it.
    // waitUntil keeps the send going after the answer has left.
    ctx.waitUntil(env.EVENTS.send(JSON.stringify({ type: "visit", path: url.pathname, visit: sql })));

    return new Response(render(RELEASE, kv, sql), {
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  },

  // Runs on the cron trigger: records when it last ran.
  async scheduled(event, env, ctx) {
    await env.CACHE.put("cron:last-run", new Date(event.scheduledTime).toISOString());
  },

  // Drains the events queue: keeps the latest event per path in KV. A
  // message body is the producer's bytes, as an ArrayBuffer.
  async queue(batch, env, ctx) {
    for (const message of batch.messages) {
      const event = JSON.parse(new TextDecoder().decode(message.body));
      await env.CACHE.put("last:" + event.path, JSON.stringify(event));
      batch.acknowledge(message.id);
    }
  },
};
