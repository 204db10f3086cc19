// The demo itself (src/demo/main.ts loads it once the Node version is known to be supported): the offline session on
// the scripted model, or a real provider named by the environment.
import { checkDemoArgs, demoHelp, DemoUsageError } from './flags.js';
import { chooseProvider, describeChoice, loadProviderModel } from './provider.js';
import { instrumentDemo, parseInstrumentArgs } from './instrument.js';
import { tracingForDemo } from './otel.js';
import { runDemo } from './run-demo.js';

async function main(): Promise<number> {
  const { help } = checkDemoArgs(process.argv.slice(2));
  if (help) {
    process.stdout.write(demoHelp());
    return 0;
  }
  const choice = chooseProvider(process.env, process.argv.slice(2));
  const model = choice.kind === 'scripted' ? undefined : await loadProviderModel(choice);
  const tty = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  const instrumentation = await instrumentDemo(parseInstrumentArgs(process.argv.slice(2)), {
    say: (line) => process.stdout.write(`${line}\n`),
    interactive: process.stdin.isTTY === true,
    waitForEnter,
  });
  const { finish, ...observers } = instrumentation;
  const tracing = await tracingForDemo(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
  const outcome = await runDemo({
    write: (text) => process.stdout.write(text),
    tty,
    modelDescription: describeChoice(choice),
    ...(model ? { model } : {}),
    ...observers,
    ...(tracing.otel ? { otel: tracing.otel } : {}),
  }).finally(() => finish().finally(() => tracing.finish()));
  return outcome.result.status === 'completed' && outcome.violations.length === 0 ? 0 : 1;
}

/** Resolves on the next line typed; stdin is paused again so it never keeps the process alive. */
function waitForEnter(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.resume();
    process.stdin.once('data', () => {
      process.stdin.pause();
      resolve();
    });
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof DemoUsageError) {
      console.error(`agentchart demo: ${error.message} (npm run demo -- --help lists the flags)`);
      process.exitCode = 2;
      return;
    }
    console.error(`agentchart demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
