// edge.sql projection of the v1alpha1 family, binding module-worker.sqlite
// (spec/runtime-v1.md §5.3, left column): makeSQL(fetcher) is env.NAME.
// Values are tagged both ways ({type: "integer", value: "<decimal>"}, …);
// one statement per call; transaction() resolves to one result per
// statement. The gateway checks statements, values and limits and fails
// them with sql_error; the checks here are of argument shapes only.
import { named, send, sqlBinding } from "./common.js";

function statementOf(method, sql, params) {
  if (typeof sql !== "string") throw new TypeError(`${method}: sql is a string`);
  if (params === undefined) return { sql };
  if (!Array.isArray(params)) throw new TypeError(`${method}: params is an array of tagged values`);
  return { sql, params };
}

async function post(fetcher, op, body) {
  let json;
  try {
    json = JSON.stringify(body);
  } catch (err) {
    throw named("sql_error", `the params are not JSON: ${err.message}`);
  }
  const res = await send(fetcher, "POST", `/sql/v1/${op}`, { body: json, headers: { "content-type": "application/json" } });
  return res.json();
}

export function makeSQL(fetcher) {
  return sqlBinding((op, body) => post(fetcher, op, body), statementOf);
}
