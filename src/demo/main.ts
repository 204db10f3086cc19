// `npm run demo`: the offline session on the scripted model, or a real provider named by the environment.
import { chooseProvider, describeChoice, loadProviderModel } from './provider.js';
import { runDemo } from './run-demo.js';

async function main(): Promise<number> {
  const choice = chooseProvider(process.env, process.argv.slice(2));
  const model = choice.kind === 'scripted' ? undefined : await loadProviderModel(choice);
  const tty = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  const outcome = await runDemo({
    write: (text) => process.stdout.write(text),
    tty,
    modelDescription: describeChoice(choice),
    ...(model ? { model } : {}),
  });
  return outcome.result.status === 'completed' && outcome.violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`agentchart demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
