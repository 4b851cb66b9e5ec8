// The greeter: a worker whose env holds only vars (GREETING, set in
// main.tf). It runs on the host's data plane today; the app worker above
// runs once the host's binding gateway (KV, objects, SQL, queues) is in.
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    return new Response(`${env.GREETING.text}: hello from takoform (path ${url.pathname})\n`, {
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  },
};
