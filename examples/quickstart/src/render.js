// A second module of the bundle, imported by worker.js: the answer line,
// e.g. "quickstart v1: visit 3 (kv 3, sql 3)". The visit number is the
// database's count (exact); KV's may lag under concurrent visits.
export function render(release, kv, sql) {
  return `${release}: visit ${sql} (kv ${kv}, sql ${sql})\n`;
}
