// Preloaded into a stdio MCP server (node --import): records what the server process reads on its
// stdin, and its pid, in MCP_OBSERVE_FILE — the server-side view of the protocol for the tests.
import { appendFileSync } from 'node:fs';

const file = process.env.MCP_OBSERVE_FILE;
if (file) {
  appendFileSync(file, `${JSON.stringify({ observedPid: process.pid })}\n`);
  const stdin = process.stdin;
  const push = stdin.push.bind(stdin);
  // Every chunk the server reads passes through push(); observing it leaves the stream's flow untouched.
  stdin.push = (chunk, encoding) => {
    if (chunk !== null && chunk !== undefined)
      appendFileSync(file, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return push(chunk, encoding);
  };
}
