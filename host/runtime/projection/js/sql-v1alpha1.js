// edge.sql projection of the v1alpha1 family, binding module-worker.sqlite
// (spec/runtime-v1.md §5.3, left column): makeSQL(fetcher) is env.NAME.
// Values are tagged both ways ({type: "integer", value: "<decimal>"}, …);
// one statement per call; transaction() resolves to one result per
// statement. The gateway checks statements, values and limits and fails
// them with sql_error; the checks here are of argument shapes only.
import { arity, named, options, send } from "./common.js";

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
  return Object.freeze({
    async execute(...args) {
      arity("execute", args, 2);
      return post(fetcher, "execute", statementOf("execute", args[0], args[1]));
    },
    async query(...args) {
      arity("query", args, 2);
      return post(fetcher, "query", statementOf("query", args[0], args[1]));
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
      const { results } = await post(fetcher, "transaction", { statements: list });
      return results;
    },
  });
}
