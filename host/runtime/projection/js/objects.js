// edge.objects projection, binding module-worker.object-bucket
// (spec/runtime-v1.md §5.2): makeObjects(fetcher) is env.NAME. Bodies
// stream both ways: put and uploadPart take a ReadableStream (or bytes),
// get resolves to {body: ReadableStream, …}; head and get resolve to null
// for a missing key; failures reject with an Error named for the
// edge.objects code. The gateway enforces every limit.
import { arity, bytes, named, options, send, unbase64, utf8 } from "./common.js";

function keyOf(key) {
  if (typeof key !== "string") throw named("invalid_key", "an object key is a string");
  if (!key.isWellFormed()) throw named("invalid_key", "an object key holds a lone surrogate, which has no UTF-8 form");
  // More than 1024 UTF-16 code units is more than 1024 UTF-8 bytes.
  if (key.length === 0 || key.length > 1024) throw named("invalid_key", "an object key is 1 to 1024 UTF-8 bytes");
  return key;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  return q.toString();
}

function str(method, name, v) {
  if (v !== undefined && typeof v !== "string") throw new TypeError(`${method}: ${name} is a string`);
  return v;
}

// upload sends a put or part body. Bytes go in the request itself. A
// ReadableStream is staged first (PUT /objects/v1/stage) through a stream
// that counts what it passes and remembers whether the caller's stream
// failed; the put or part then names the staged body and its count, and
// is sent only when the stream ended cleanly — a stream that errors fails
// invalid_body and nothing is stored.
async function upload(fetcher, method, path, value) {
  if (!(value instanceof ReadableStream)) {
    const body = bytes(value, "invalid_body", "a body");
    return send(fetcher, method, path, { body, headers: { "content-type": "application/octet-stream" } });
  }
  const reader = value.getReader();
  const state = { failed: null, count: 0 };
  const counted = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        state.failed = err;
        controller.error(err);
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      let b;
      try {
        b = bytes(chunk.value, "invalid_body", "a body chunk");
      } catch (err) {
        state.failed = err;
        controller.error(err);
        reader.cancel(err).catch(() => {});
        return;
      }
      state.count += b.byteLength;
      controller.enqueue(b);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  let staged;
  try {
    const res = await send(fetcher, "PUT", "/objects/v1/stage", {
      body: counted, duplex: "half", headers: { "content-type": "application/octet-stream" } });
    staged = await res.json();
  } catch (err) {
    if (state.failed) throw named("invalid_body", `the body stream failed: ${state.failed && state.failed.message}; nothing was stored`);
    throw err;
  }
  if (state.failed) throw named("invalid_body", `the body stream failed: ${state.failed && state.failed.message}; nothing was stored`);
  const sep = path.includes("?") ? "&" : "?";
  return send(fetcher, method, `${path}${sep}staged=${encodeURIComponent(staged.staged)}&size=${state.count}`);
}

export function makeObjects(fetcher) {
  return Object.freeze({
    async head(...args) {
      arity("head", args, 1);
      const res = await send(fetcher, "GET", `/objects/v1/head?${query({ key: keyOf(args[0]) })}`, {}, [404]);
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      return res.json();
    },
    async get(...args) {
      arity("get", args, 2);
      const key = keyOf(args[0]);
      const o = options("get", args[1], ["range", "ifMatch", "ifNoneMatch"]);
      const p = { key, ifMatch: str("get", "ifMatch", o.ifMatch), ifNoneMatch: str("get", "ifNoneMatch", o.ifNoneMatch) };
      if (o.range !== undefined) {
        const r = options("get range", o.range, ["offset", "length"]);
        if (!Number.isSafeInteger(r.offset) || r.offset < 0) throw new TypeError("get: range.offset is an integer ≥ 0");
        if (r.length !== undefined && (!Number.isSafeInteger(r.length) || r.length < 0)) throw new TypeError("get: range.length is an integer ≥ 0");
        p.offset = r.offset;
        p.length = r.length;
      }
      const res = await send(fetcher, "GET", `/objects/v1/object?${query(p)}`, {}, [404]);
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      const meta = JSON.parse(utf8.decode(unbase64(res.headers.get("Takoform-Object"))));
      return { body: res.body, ...meta };
    },
    async put(...args) {
      arity("put", args, 3);
      const key = keyOf(args[0]);
      const o = options("put", args[2], ["contentType", "ifMatch", "ifNoneMatch", "contentLength"]);
      if (o.ifNoneMatch !== undefined && o.ifNoneMatch !== "*") throw new TypeError('put: ifNoneMatch is "*" (create only)');
      if (o.contentLength !== undefined && (!Number.isSafeInteger(o.contentLength) || o.contentLength < 0)) {
        throw new TypeError("put: contentLength is an integer ≥ 0");
      }
      const q = query({ key, contentType: str("put", "contentType", o.contentType), ifMatch: str("put", "ifMatch", o.ifMatch),
        ifNoneMatch: o.ifNoneMatch, contentLength: o.contentLength });
      const res = await upload(fetcher, "PUT", `/objects/v1/object?${q}`, args[1]);
      return res.json();
    },
    async delete(...args) {
      arity("delete", args, 1);
      const res = await send(fetcher, "DELETE", `/objects/v1/object?${query({ key: keyOf(args[0]) })}`);
      await res.body?.cancel();
      return undefined;
    },
    async list(...args) {
      arity("list", args, 1);
      const o = options("list", args[0], ["prefix", "delimiter", "limit", "cursor"]);
      if (o.limit !== undefined && (!Number.isInteger(o.limit) || o.limit < 1 || o.limit > 1000)) throw new TypeError("list: limit is an integer from 1 to 1000");
      const q = query({ prefix: str("list", "prefix", o.prefix), delimiter: str("list", "delimiter", o.delimiter), limit: o.limit,
        cursor: str("list", "cursor", o.cursor) });
      const res = await send(fetcher, "GET", `/objects/v1/list?${q}`);
      return res.json();
    },
    async createMultipartUpload(...args) {
      arity("createMultipartUpload", args, 2);
      const key = keyOf(args[0]);
      const o = options("createMultipartUpload", args[1], ["contentType"]);
      const q = query({ key, contentType: str("createMultipartUpload", "contentType", o.contentType) });
      const res = await send(fetcher, "POST", `/objects/v1/uploads?${q}`);
      return res.json();
    },
    async uploadPart(...args) {
      arity("uploadPart", args, 4);
      const [k, uploadId, partNumber, value] = args;
      const key = keyOf(k);
      if (typeof uploadId !== "string") throw new TypeError("uploadPart: uploadId is the string createMultipartUpload returned");
      if (!Number.isInteger(partNumber)) throw named("invalid_part", "partNumber is an integer from 1 to 10000");
      const res = await upload(fetcher, "PUT", `/objects/v1/part?${query({ key, upload: uploadId, part: partNumber })}`, value);
      return res.json();
    },
    async completeMultipartUpload(...args) {
      arity("completeMultipartUpload", args, 3);
      const [k, uploadId, parts] = args;
      const key = keyOf(k);
      if (typeof uploadId !== "string") throw new TypeError("completeMultipartUpload: uploadId is the string createMultipartUpload returned");
      if (!Array.isArray(parts)) throw new TypeError("completeMultipartUpload: parts is an array of {partNumber, etag}");
      const list = parts.map((p, i) => {
        if (p === undefined) throw new TypeError(`completeMultipartUpload parts[${i}] is {partNumber, etag}`);
        const o = options(`completeMultipartUpload parts[${i}]`, p, ["partNumber", "etag"]);
        return { partNumber: o.partNumber, etag: o.etag };
      });
      const res = await send(fetcher, "POST", `/objects/v1/complete?${query({ key, upload: uploadId })}`, {
        body: JSON.stringify({ parts: list }), headers: { "content-type": "application/json" } });
      return res.json();
    },
    async abortMultipartUpload(...args) {
      arity("abortMultipartUpload", args, 2);
      const [k, uploadId] = args;
      const key = keyOf(k);
      if (typeof uploadId !== "string") throw new TypeError("abortMultipartUpload: uploadId is the string createMultipartUpload returned");
      const res = await send(fetcher, "DELETE", `/objects/v1/upload?${query({ key, upload: uploadId })}`);
      await res.body?.cancel();
      return undefined;
    },
  });
}
