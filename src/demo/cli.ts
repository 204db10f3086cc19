// The demo itself (src/demo/main.ts loads it once the Node version is known to be supported): the offline session on
// the scripted model, or a real provider named by the environment.
import { checkDemoArgs, demoHelp, DemoUsageError } from './flags.js';
import { chooseProvider, describeChoice, loadProviderModel } from './provider.js';
import { instrumentDemo, parseInstrumentArgs } from './instrument.js';
import { tracingForDemo } from './otel.js';
import { runDemo, SCRIPTED_MODEL_NAME } from './run-demo.js';
import { DEMO_SCRIPT } from './script.js';
import { attachToStudio, DEMO_SESSION, parseStudioArgs, startDemoStudio, type DemoStudio } from './studio.js';
import { scriptedModel, type Clock } from '../testing.js';

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
  const interactive = process.stdin.isTTY === true;
  const studio = await studioForDemo(parseStudioArgs(process.argv.slice(2)), interactive);
  const scripted = studio
    ? studio.pace(scriptedModel(DEMO_SCRIPT, { name: SCRIPTED_MODEL_NAME, clock: studio.clock }))
    : undefined;
  const outcome = await runDemo({
    write: (text) => process.stdout.write(text),
    tty,
    modelDescription: describeChoice(choice),
    ...((model ?? scripted) ? { model: model ?? scripted } : {}),
    ...observers,
    ...(tracing.otel ? { otel: tracing.otel } : {}),
    ...(studio
      ? {
          clock: studio.clock,
          studio: {
            store: studio.store,
            sessionId: DEMO_SESSION,
            approvals: interactive ? ('page' as const) : ('auto' as const),
            onAgent: (agent) => attachToStudio(studio.studio, agent),
          },
        }
      : {}),
  })
    .then(async (result) => {
      if (studio && interactive) {
        say(`The run is over; the studio stays open to rewind and fork it: ${studio.studio.url}`);
        say('Press Enter to stop the studio.');
        await waitForEnter();
      }
      return result;
    })
    .finally(() => finish().finally(() => tracing.finish().finally(() => studio?.studio.stop())));
  return outcome.result.status === 'completed' && outcome.violations.length === 0 ? 0 : 1;
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const realClock: Clock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/** `--studio`: the studio on loopback, its URL printed; at a terminal, the session waits for Enter. */
async function studioForDemo(
  args: ReturnType<typeof parseStudioArgs>,
  interactive: boolean,
): Promise<DemoStudio | null> {
  if (!args.studio) return null;
  const studio = await startDemoStudio(args, realClock);
  say(`agentchart studio: open ${studio.studio.url}`);
  say('(it listens on 127.0.0.1 only; the token in the URL is new at every start)');
  if (interactive) {
    say('Open it, then press Enter to start the session (answer the approval on the page when it asks).');
    await waitForEnter();
  }
  return studio;
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
