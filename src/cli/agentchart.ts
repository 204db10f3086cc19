#!/usr/bin/env node
// The `agentchart` command (package.json `bin`). The Node version is checked before anything else is
// loaded: an older Node gets one message saying what to do, not a crash inside a dependency.
import { exitUnlessSupportedNode } from '../platform/node-version.js';

exitUnlessSupportedNode('npx agentchart studio');
const { runCli } = await import('./commands.js');
process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
