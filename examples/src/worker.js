// The ES module the examples deploy: its default export carries the three
// handlers the attachments call (fetch, scheduled, queue).
export default {
  async fetch(request, env, ctx) {
    return new Response("hello from takoform");
  },
  async scheduled(controller, env, ctx) {},
  async queue(batch, env, ctx) {
    for (const message of batch.messages) message.ack();
  },
};
