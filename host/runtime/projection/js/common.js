// Shared by the binding projections (spec/runtime-v1.md §5.0). Each
// projection holds a workerd Fetcher whose requests reach the host's
// gateway with the binding's resource UID attached outside the isolate;
// nothing here names a resource, a URL tenant code could use, or a token.

const encoder = new TextEncoder();

// Gateway requests go to this origin; the Fetcher ignores the hostname.
export const GATEWAY = "http://gateway";

// named is an Error whose name is an Interface error code.
export function named(code, message) {
  const e = new Error(message);
  e.name = code;
  return e;
}

// arity refuses extra positional arguments with a TypeError.
export function arity(method, args, max) {
  if (args.length > max) {
    throw new TypeError(`${method} takes at most ${max} argument${max === 1 ? "" : "s"}, got ${args.length}`);
  }
}

// options checks an options object: undefined is none; anything but a
// plain object, or a member not in allowed, is a TypeError.
export function options(method, value, allowed) {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`${method} options must be an object`);
  }
  for (const k of Object.keys(value)) {
    if (!allowed.includes(k)) {
      throw new TypeError(`${method} has no option ${JSON.stringify(k)}; it takes ${allowed.join(", ")}`);
    }
  }
  return value;
}

// bytes converts a value to the exact bytes it carries: an ArrayBuffer
// whole, an ArrayBufferView exactly its window, a string as UTF-8 (a
// lone surrogate has no UTF-8 form); anything else fails with code.
export function bytes(value, code, what) {
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw named(code, `${what} is a string holding a lone surrogate, which has no UTF-8 form`);
    return encoder.encode(value);
  }
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw named(code, `${what} must be an ArrayBuffer, a typed array or DataView, or a string`);
}

// base64 of bytes, for a header.
export function base64(u8) {
  let s = "";
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s);
}

export function unbase64(text) {
  const s = atob(text);
  const u8 = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u8[i] = s.charCodeAt(i);
  return u8;
}

export const utf8 = {
  encode: (s) => encoder.encode(s),
  decode: (u8) => new TextDecoder("utf-8", { fatal: true }).decode(u8),
};

// send makes one gateway request and returns its Response when ok; a
// refusal rejects with an Error named for its code (a TypeError for
// invalid_argument), a failure to reach the gateway with
// backend_unavailable. okStatuses may admit more statuses (KV's 404).
export async function send(fetcher, method, path, init = {}, okStatuses = []) {
  let res;
  try {
    res = await fetcher.fetch(GATEWAY + path, { method, ...init });
  } catch (err) {
    throw named("backend_unavailable", `the host's storage could not be reached: ${err && err.message}`);
  }
  if (res.ok || okStatuses.includes(res.status)) return res;
  let code = "backend_unavailable";
  let message = `the host's storage answered ${res.status}`;
  try {
    const body = await res.json();
    if (body && body.error && typeof body.error.code === "string") {
      code = body.error.code;
      message = String(body.error.message || code);
    }
  } catch {
    // not an error document: backend_unavailable
  }
  if (code === "invalid_argument") throw new TypeError(message);
  throw named(code, message);
}

// sqlBinding is an edge.sql binding's methods (spec/runtime-v1.md §5.3),
// the same in both families: post(op, body) sends one call to the
// gateway and resolves to its answer; statementOf(method, sql, params)
// checks one statement's argument shapes the family's way and returns
// {sql, params?}.
export function sqlBinding(post, statementOf) {
  return Object.freeze({
    async execute(...args) {
      arity("execute", args, 2);
      return post("execute", statementOf("execute", args[0], args[1]));
    },
    async query(...args) {
      arity("query", args, 2);
      return post("query", statementOf("query", args[0], args[1]));
    },
    async transaction(...args) {
      arity("transaction", args, 1);
      const [statements] = args;
      if (!Array.isArray(statements) || statements.length === 0) {
        throw new TypeError("transaction takes a non-empty array of {sql, params?}");
      }
      const list = statements.map((s, i) => {
        if (s === undefined) throw new TypeError(`transaction statements[${i}] is {sql, params?}`);
        const o = options(`transaction statements[${i}]`, s, ["sql", "params"]);
        return statementOf(`transaction statements[${i}]`, o.sql, o.params);
      });
      const { results } = await post("transaction", { statements: list });
      return results;
    },
  });
}
