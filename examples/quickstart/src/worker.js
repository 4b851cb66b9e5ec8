// The quickstart worker: one ES module whose default export carries the
// three handlers the configuration declares (fetch, scheduled, queue).
// Bindings arrive on `env` under the names main.tf gives them.
import { render } from "./render.js";

export default {
  // Serves the endpoint: counts visits in KV, records them in SQLite and
  // queues an event for the consumer below.
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/media/")) {
      const object = await env.MEDIA.get(url.pathname.slice("/media/".length));
      return object ? new Response(object.body) : new Response("not found", { status: 404 });
    }
    const visits = Number((await env.CACHE.get("visits")) ?? "0") + 1;
    await env.CACHE.put("visits", String(visits));
    await env.DB.prepare("INSERT INTO visits (path, at) VALUES (?, ?)")
      .bind(url.pathname, Date.now())
      .run();
    ctx.waitUntil(env.EVENTS.send({ type: "visit", path: url.pathname }));
    return new Response(render("hello from takoform", visits), {
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  },

  // Runs on the cron trigger: forgets visits older than a day.
  async scheduled(controller, env, ctx) {
    const cutoff = controller.scheduledTime - 24 * 60 * 60 * 1000;
    await env.DB.prepare("DELETE FROM visits WHERE at < ?").bind(cutoff).run();
  },

  // Drains the events queue: keeps the latest event per path in KV.
  async queue(batch, env, ctx) {
    for (const message of batch.messages) {
      await env.CACHE.put("last:" + message.body.path, JSON.stringify(message.body));
      message.ack();
    }
  },
};
