// Takoform's runtime probe (takoform.runtime-abi-probe@v1), written from
// spec/runtime-v1.md §8.2. It holds no expectation: it reports what the
// runtime supplied, and stores and echoes observations under the value the
// runner sent. Routes follow the first "/abi/" of the path.
const PROBE = "takoform.runtime-abi-probe@v1";
const enc = new TextEncoder();
const dec = new TextDecoder();

function answer(status, members) {
  return new Response(JSON.stringify({ probe: PROBE, ...members }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function route(url) {
  const i = url.pathname.indexOf("/abi/");
  return i < 0 ? "" : url.pathname.slice(i + "/abi/".length);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function toBase64(u8) {
  let out = "";
  for (let i = 0; i < u8.length; i += 3) {
    const n = (u8[i] << 16) | ((u8[i + 1] ?? 0) << 8) | (u8[i + 2] ?? 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
    out += i + 1 < u8.length ? B64[(n >> 6) & 63] : "=";
    out += i + 2 < u8.length ? B64[n & 63] : "=";
  }
  return out;
}

function fromBase64(s) {
  const clean = String(s).replace(/=+$/, "");
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0, acc = 0, j = 0;
  for (const c of clean) {
    const v = B64.indexOf(c);
    if (v < 0) throw new TypeError("not standard base64");
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 255;
    }
  }
  return out.subarray(0, j);
}

// bytesOf is what a binding supplied, as bytes: an ArrayBuffer, a view's
// window, or a string's UTF-8 (reported, not judged).
function bytesOf(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === "string") return enc.encode(v);
  if (v && typeof v === "object" && "data" in v) return bytesOf(v.data);
  return enc.encode(String(v));
}

async function readJSON(env, key) {
  const v = await env.CACHE.get(key);
  return v === null ? null : JSON.parse(dec.decode(bytesOf(v)));
}

function ndjson(pull) {
  return new Response(new ReadableStream({ pull }), { status: 200, headers: { "content-type": "application/x-ndjson" } });
}

function line(controller, obj) {
  controller.enqueue(enc.encode(JSON.stringify(obj) + "\n"));
}

function echoStream(request) {
  const reader = request.body === null ? null : request.body.getReader();
  let n = 0, ended = false;
  return ndjson(async (controller) => {
    if (ended) return;
    const r = reader === null ? { done: true } : await reader.read();
    if (r.done) {
      ended = true;
      line(controller, { end: true });
      controller.close();
      return;
    }
    n++;
    line(controller, { read: n, bytes: r.value.byteLength });
  });
}

function stream(url) {
  const chunks = Number(url.searchParams.get("chunks") ?? "0");
  const gap = Number(url.searchParams.get("gapMillis") ?? "0");
  let i = 0;
  return ndjson(async (controller) => {
    if (i >= chunks) {
      controller.close();
      return;
    }
    if (i > 0) await sleep(gap);
    i++;
    line(controller, { chunk: i });
  });
}

// peerURL is the caller's own URL with its route replaced (query kept);
// its hostname means nothing to a service binding (spec/runtime-v1.md §5.5).
function peerURL(request, to) {
  const url = new URL(request.url);
  const i = url.pathname.indexOf("/abi/");
  url.pathname = url.pathname.slice(0, i) + "/abi/" + to;
  return url.toString();
}

export default {
  async fetch(request, env, ctx) {
    const argumentCount = arguments.length;
    const url = new URL(request.url);
    const r = route(url);
    const m = request.method;
    if (r === "health" && m === "GET") return answer(200, { ok: true });
    if (r === "handler" && m === "GET") {
      return answer(200, {
        argumentCount,
        requestIsRequest: request instanceof Request,
        requestMethod: request.method,
        envIsObject: typeof env === "object" && env !== null,
        waitUntilIsFunction: typeof ctx?.waitUntil === "function",
      });
    }
    if (r === "throw" && m === "GET") throw new Error("takoform runtime probe: a deliberate uncaught throw");
    if (r === "env" && m === "GET") return answer(200, { propertyNames: Object.keys(env).sort() });
    if (r === "globals" && m === "GET") {
      const names = (url.searchParams.get("names") ?? "").split(",").filter((n) => n !== "");
      const present = [], missing = [];
      for (const name of names) {
        let v = globalThis;
        for (const part of name.split(".")) v = v === undefined || v === null ? undefined : v[part];
        (v === undefined ? missing : present).push(name);
      }
      return answer(200, { present: present.sort(), missing: missing.sort() });
    }
    if (r === "kv" && m === "POST") {
      const { key, valueBase64 } = await request.json();
      await env.CACHE.put(key, fromBase64(valueBase64));
      return answer(200, { stored: true });
    }
    if (r === "kv" && m === "GET") {
      const v = await env.CACHE.get(url.searchParams.get("key"));
      return v === null ? answer(200, { found: false }) : answer(200, { found: true, valueBase64: toBase64(bytesOf(v)) });
    }
    if (r === "echo-stream" && m === "POST") return echoStream(request);
    if (r === "stream" && m === "GET") return stream(url);
    if (r === "wait-until" && m === "POST") {
      const { nonce, delayMillis } = await request.json();
      let rejected = false;
      ctx.waitUntil(
        (async () => {
          await sleep(0);
          rejected = true;
          throw new Error("takoform runtime probe: a deliberately rejected waitUntil task");
        })(),
      );
      ctx.waitUntil(
        (async () => {
          await sleep(delayMillis);
          await env.CACHE.put("wait-until:" + nonce, JSON.stringify({ afterRejection: rejected, nonce }));
        })(),
      );
      return answer(200, { registeredTasks: 2, responseSent: true });
    }
    if (r === "wait-until" && m === "GET") {
      const v = await readJSON(env, "wait-until:" + url.searchParams.get("nonce"));
      return v === null ? answer(200, { settled: false }) : answer(200, { settled: true, afterRejection: v.afterRejection, nonce: v.nonce });
    }
    if (r === "scheduled" && m === "DELETE") {
      await env.CACHE.delete("scheduled:last");
      return answer(200, { cleared: true });
    }
    if (r === "scheduled" && m === "GET") {
      const v = await readJSON(env, "scheduled:last");
      return v === null ? answer(200, { observed: false }) : answer(200, { observed: true, cron: v.cron, scheduledTimeMillis: v.scheduledTimeMillis });
    }
    if (r === "queue" && m === "POST") {
      const { nonce, payloadBase64 } = await request.json();
      await env.EVENTS.send(enc.encode(JSON.stringify({ nonce, payloadBase64 })));
      return answer(200, { sent: true });
    }
    if (r === "queue" && m === "GET") {
      const v = await readJSON(env, "queue:" + url.searchParams.get("nonce"));
      return v === null ? answer(200, { delivered: false }) : answer(200, { delivered: true, ...v });
    }
    if (r === "service-echo-stream" && m === "POST") {
      return env.PEER.fetch(peerURL(request, "echo-stream"), { method: "POST", body: request.body, duplex: "half" });
    }
    if (r === "service-stream" && m === "GET") {
      return env.PEER.fetch(peerURL(request, "stream"));
    }
    return answer(404, { error: "no such probe route", route: r });
  },

  async scheduled(event, env, ctx) {
    await env.CACHE.put("scheduled:last", JSON.stringify({ cron: event.cron, scheduledTimeMillis: event.scheduledTime }));
  },

  async queue(batch, env, ctx) {
    for (const message of batch.messages) {
      const sent = JSON.parse(dec.decode(bytesOf(message.body)));
      const seen = { queue: batch.queue, attempts: message.attempts, messageId: message.id, payloadBase64: sent.payloadBase64, nonce: sent.nonce };
      await env.CACHE.put("queue:" + sent.nonce, JSON.stringify(seen));
    }
  },
};
