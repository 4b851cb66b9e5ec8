// edge.sql projection of the v1beta1 family, binding module-worker.sqlite
// (spec/runtime-v1.md §5.3, right column): makeSQL(fetcher) is env.NAME.
// Values are untagged both ways: null, a finite number within
// ±9007199254740991, a string, or {encoding: "base64", data} for a BLOB
// (which stays that object in results). A result is {rows, rowsWritten};
// transaction() resolves to one result per statement. Checked here: what
// JSON would carry wrongly (a number that is not finite or not safe, a
// string with a lone surrogate, bigint, undefined) and the value shapes;
// the gateway checks statements, values again and every limit.
import { named, send, sqlBinding } from "./common.js";

const MAX = 9007199254740991;

function checkValue(method, v, i) {
  const at = `${method}: params[${i}]`;
  if (v === null) return;
  switch (typeof v) {
    case "number":
      if (!Number.isFinite(v) || Math.abs(v) > MAX) {
        throw named("numeric_out_of_range", `${at} is ${v}: a number is finite and within ±${MAX}; pass a larger integer as a string`);
      }
      return;
    case "string":
      if (!v.isWellFormed()) throw named("sql_error", `${at} is a string holding a lone surrogate, which has no UTF-8 form`);
      return;
    case "object": {
      const keys = Object.keys(v);
      if (Object.getPrototypeOf(v) === Object.prototype && keys.length === 2 && v.encoding === "base64" && typeof v.data === "string") return;
      if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
        throw named("sql_error", `${at} is bytes: pass a BLOB as {encoding: "base64", data: "<base64>"}`);
      }
      if ("type" in v) {
        throw named("sql_error", `${at} is a tagged value {type, …}; this database takes untagged values: null, a number, a string or {encoding: "base64", data}`);
      }
      throw named("sql_error", `${at} is an object other than {encoding: "base64", data: "<base64>"}`);
    }
    default:
      throw named("sql_error", `${at} is a ${typeof v}: a value is null, a number, a string or {encoding: "base64", data} (no booleans, bigints or undefined)`);
  }
}

function statementOf(method, sql, params) {
  if (typeof sql !== "string") throw new TypeError(`${method}: sql is a string`);
  if (!sql.isWellFormed()) throw named("sql_error", `${method}: sql holds a lone surrogate, which has no UTF-8 form`);
  if (params === undefined) return { sql };
  if (!Array.isArray(params)) throw new TypeError(`${method}: params is an array of values`);
  params.forEach((v, i) => checkValue(method, v, i));
  return { sql, params };
}

async function post(fetcher, op, body) {
  const res = await send(fetcher, "POST", `/sql/v1beta1/${op}`, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return res.json();
}

export function makeSQL(fetcher) {
  return sqlBinding((op, body) => post(fetcher, op, body), statementOf);
}
