/**
 * `npm run fuzz`: many interleavings of the property suites (default 100,000 over every CI suite),
 * with progress, the time it took, and — on a violation — the seed and path that replay it:
 *
 *   npm run fuzz                                   100,000 interleavings, every CI suite
 *   npm run fuzz -- --runs 5000 --suite tools,model
 *   npm run fuzz -- --full                         the whole space
 *   npm run fuzz -- --seed S --path P              replays a failure (add the same --suite / --full)
 */
import fc from 'fast-check';
import { describeReport, runScenario } from './scenario.js';
import type { Scenario } from './spec.js';
import { scenarioArbitrary } from './spec.js';
import { FULL_SUITE, SUITES, suiteNamed, type Suite } from './suites.js';

interface Args {
  runs: number;
  suites: Suite[];
  seed?: number;
  path?: string;
  flags: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 100_000, suites: SUITES, flags: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--runs':
        args.runs = Number(value());
        if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error('--runs must be a positive integer');
        break;
      case '--suite': {
        const names = value();
        args.suites = names.split(',').map(suiteNamed);
        args.flags.push(`--suite ${names}`);
        break;
      }
      case '--full':
        args.suites = [FULL_SUITE];
        args.flags.push('--full');
        break;
      case '--seed':
        args.seed = Number(value());
        if (!Number.isInteger(args.seed)) throw new Error('--seed must be an integer');
        break;
      case '--path':
        args.path = value();
        break;
      default:
        throw new Error(`unknown argument ${flag}; see the header of test/interleavings/fuzz.ts`);
    }
  }
  return args;
}

/** XState's development warnings about events reaching stopped actors are expected in races. */
function silenceStoppedActorWarnings(): void {
  const warn = console.warn;
  console.warn = (...parts: unknown[]) => {
    if (typeof parts[0] === 'string' && parts[0].includes('was sent to stopped actor')) return;
    warn(...parts);
  };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  silenceStoppedActorWarnings();
  const tagged = (suite: Suite) => scenarioArbitrary(suite.focus).map((scenario) => ({ suite: suite.name, scenario }));
  const arbitrary = args.suites.length === 1 ? tagged(args.suites[0]!) : fc.oneof(...args.suites.map(tagged));
  const perSuite = new Map<string, number>();
  const started = performance.now();
  let done = 0;
  let lastPrint = started;
  let lastFailure: string | null = null;

  const property = fc.asyncProperty(
    arbitrary,
    fc.scheduler(),
    async ({ suite, scenario }: { suite: string; scenario: Scenario }, scheduler) => {
      const report = await runScenario(scenario, scheduler);
      done++;
      perSuite.set(suite, (perSuite.get(suite) ?? 0) + 1);
      const now = performance.now();
      if (now - lastPrint > 5_000) {
        lastPrint = now;
        const rate = (now - started) / done;
        console.log(
          `  ${done.toLocaleString('en')} / ${args.runs.toLocaleString('en')} interleavings, ${rate.toFixed(2)} ms each, ~${Math.round(((args.runs - done) * rate) / 1000)} s left`,
        );
      }
      if (report.violations.length > 0) {
        lastFailure = `suite ${suite}\n${describeReport(report, scheduler)}`;
        return false;
      }
      return true;
    },
  );

  const seed = args.seed ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const replaying = args.path !== undefined;
  console.log(
    replaying
      ? `replaying seed ${seed} path ${args.path} (${args.suites.map((s) => s.name).join(', ')})`
      : `fuzzing ${args.runs.toLocaleString('en')} interleavings of ${args.suites.map((s) => s.name).join(', ')} (seed ${seed})`,
  );
  const result = await fc.check(property, {
    numRuns: args.runs,
    seed,
    ...(replaying ? { path: args.path, endOnFailure: true } : {}),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const tally = [...perSuite].map(([name, count]) => `${name} ${count.toLocaleString('en')}`).join(', ');

  if (!result.failed) {
    console.log(`${done.toLocaleString('en')} interleavings (${tally}), 0 violations, in ${seconds} s`);
    return 0;
  }
  console.log(
    `VIOLATION after ${result.numRuns.toLocaleString('en')} runs and ${result.numShrinks} shrinks, in ${seconds} s`,
  );
  if (lastFailure) console.log(lastFailure);
  else if (result.errorInstance)
    console.log(String(result.errorInstance instanceof Error ? result.errorInstance.stack : result.errorInstance));
  console.log(`counterexample: ${fc.stringify(result.counterexample?.[0])}`);
  const replay = [
    'npm run fuzz --',
    ...args.flags,
    `--seed ${result.seed}`,
    `--path ${result.counterexamplePath}`,
  ].join(' ');
  console.log(`seed ${result.seed} path ${result.counterexamplePath}\nreplay: ${replay}`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
