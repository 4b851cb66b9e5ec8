// edge.kv projection, binding module-worker.edge-kv (spec/runtime-v1.md §5.1):
// makeKV(fetcher) is env.NAME. Values are bytes both ways; get resolves to
// an ArrayBuffer or null; failures reject with an Error named for the
// edge.kv code. The gateway enforces every limit; the checks here only
// keep a request from being sent that cannot succeed.
import { arity, base64, bytes, named, options, send, unbase64, utf8 } from "./common.js";

const METADATA = "Takoform-KV-Metadata";

function keyOf(key) {
  if (typeof key !== "string") throw named("invalid_key", "a key is a string");
  if (!key.isWellFormed()) throw named("invalid_key", "a key holds a lone surrogate, which has no UTF-8 form");
  // More than 512 UTF-16 code units is more than 512 UTF-8 bytes.
  if (key.length === 0 || key.length > 512) throw named("invalid_key", "a key is 1 to 512 UTF-8 bytes");
  return encodeURIComponent(key);
}

function metadataHeader(m) {
  if (m === undefined) return undefined;
  if (m === null || typeof m !== "object" || Array.isArray(m)) throw new TypeError("metadata is an object whose values are strings");
  for (const [k, v] of Object.entries(m)) {
    if (typeof v !== "string") throw new TypeError(`metadata values are strings; ${JSON.stringify(k)} is not`);
  }
  const json = utf8.encode(JSON.stringify(m));
  if (json.length > 65536) throw named("metadata_too_large", "metadata is at most 1024 bytes of canonical JSON");
  return base64(json);
}

async function read(fetcher, key, withMetadata) {
  const res = await send(fetcher, "GET", `/kv/v1/value?key=${keyOf(key)}`, {}, [404]);
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  const value = await res.arrayBuffer();
  if (!withMetadata) return value;
  const m = res.headers.get(METADATA);
  return m === null ? { value } : { value, metadata: JSON.parse(utf8.decode(unbase64(m))) };
}

export function makeKV(fetcher) {
  return Object.freeze({
    async get(...args) {
      arity("get", args, 1);
      return read(fetcher, args[0], false);
    },
    async getWithMetadata(...args) {
      arity("getWithMetadata", args, 1);
      return read(fetcher, args[0], true);
    },
    async put(...args) {
      arity("put", args, 3);
      const [key, value, opts] = args;
      const k = keyOf(key);
      const body = bytes(value, "invalid_value", "a value");
      const o = options("put", opts, ["expirationTtlSeconds", "metadata"]);
      let path = `/kv/v1/value?key=${k}`;
      if (o.expirationTtlSeconds !== undefined) {
        if (!Number.isInteger(o.expirationTtlSeconds)) throw new TypeError("expirationTtlSeconds is an integer from 60 to 315360000");
        path += `&ttl=${o.expirationTtlSeconds}`;
      }
      const headers = { "content-type": "application/octet-stream" };
      const meta = metadataHeader(o.metadata);
      if (meta !== undefined) headers[METADATA] = meta;
      const res = await send(fetcher, "PUT", path, { body, headers });
      await res.body?.cancel();
      return undefined;
    },
    async delete(...args) {
      arity("delete", args, 1);
      const res = await send(fetcher, "DELETE", `/kv/v1/value?key=${keyOf(args[0])}`);
      await res.body?.cancel();
      return undefined;
    },
    async list(...args) {
      arity("list", args, 1);
      const o = options("list", args[0], ["prefix", "limit", "cursor"]);
      const q = new URLSearchParams();
      if (o.prefix !== undefined) {
        if (typeof o.prefix !== "string" || !o.prefix.isWellFormed()) throw new TypeError("prefix is a well-formed string");
        q.set("prefix", o.prefix);
      }
      if (o.limit !== undefined) {
        if (!Number.isInteger(o.limit) || o.limit < 1 || o.limit > 1000) throw new TypeError("limit is an integer from 1 to 1000");
        q.set("limit", String(o.limit));
      }
      if (o.cursor !== undefined) {
        if (typeof o.cursor !== "string") throw new TypeError("cursor is the string a list returned");
        q.set("cursor", o.cursor);
      }
      const res = await send(fetcher, "GET", `/kv/v1/keys?${q}`);
      const page = await res.json();
      const out = { keys: page.keys.map((k) => ({ name: k.name })), listComplete: page.listComplete };
      if (page.cursor !== undefined) out.cursor = page.cursor;
      return out;
    },
  });
}
