// A second module of the bundle, imported by worker.js.
export function render(greeting, visits) {
  return `${greeting} (visit ${visits})\n`;
}
