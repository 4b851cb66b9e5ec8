// Takoform's runtime peer, written from spec/runtime-v1.md §8.2: the
// service-binding target of the probe. It serves only echo-stream and
// stream, and stamps every line with its identity, a literal only this
// module carries, so an answer the caller produced itself cannot pass.
const PEER = "takoform-runtime-checks-peer-5c2e90d7b41f86a3";
const enc = new TextEncoder();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function lines(pull) {
  return new Response(new ReadableStream({ pull }), { status: 200, headers: { "content-type": "application/x-ndjson" } });
}

function line(controller, obj) {
  controller.enqueue(enc.encode(JSON.stringify({ ...obj, peer: PEER }) + "\n"));
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const i = url.pathname.indexOf("/abi/");
    const r = i < 0 ? "" : url.pathname.slice(i + "/abi/".length);
    if (r === "echo-stream" && request.method === "POST") {
      const reader = request.body === null ? null : request.body.getReader();
      let n = 0, ended = false;
      return lines(async (controller) => {
        if (ended) return;
        const got = reader === null ? { done: true } : await reader.read();
        if (got.done) {
          ended = true;
          line(controller, { end: true });
          controller.close();
          return;
        }
        n++;
        line(controller, { read: n, bytes: got.value.byteLength });
      });
    }
    if (r === "stream" && request.method === "GET") {
      const chunks = Number(url.searchParams.get("chunks") ?? "0");
      const gap = Number(url.searchParams.get("gapMillis") ?? "0");
      let k = 0;
      return lines(async (controller) => {
        if (k >= chunks) {
          controller.close();
          return;
        }
        if (k > 0) await sleep(gap);
        k++;
        line(controller, { chunk: k });
      });
    }
    return new Response(JSON.stringify({ error: "the peer serves only echo-stream and stream", route: r, peer: PEER }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  },
};
