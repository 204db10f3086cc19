import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  FailureCodeSchema,
  isRetryableKind,
  RunErrorCodeSchema,
  type AgentErrorCode,
  type ErrorKind,
  type FailureCode,
  type RunErrorCode,
} from '../../src/domain/errors.js';

/**
 * The parts of docs/ that are written from the code and from measurements, never by hand: the error codes
 * (from the enums in src/domain/errors.ts: a code added there without a line here fails the typecheck) and
 * the benchmark figures (from bench/results.json, written by `npm run bench` on the commit it names).
 * `npm run docs:regions` rewrites them; test/docs/regions.test.ts fails when a page is stale.
 * A region sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** When each `AgentError` is thrown, and what to do about it. */
const AGENT_ERRORS: Record<AgentErrorCode, string> = {
  AlreadyRunning:
    '`prompt()` or `continue()` while a run is in progress. Wait for `run.result`, or use `steer()` / `followUp()`.',
  NotReady: 'The agent was used before `await agent.ready` where the session must be loaded first.',
  Closed:
    'The agent was closed (`agent.close()`): it takes no prompt, message or answer afterwards. Create a new agent on the same session; nothing handed over before `close()` was lost.',
  NothingToContinue: '`continue()` with no history and no queued message.',
  InvalidInput:
    'A message, decision or session id that cannot be taken: an empty `prompt()`, a `resolveApproval` decision not of its shape, a message or decision carrying what JSON cannot hold (message data, a tool call’s arguments); a tool’s `ctx.update` value JSON cannot hold (the promise rejects, the run goes on). Nothing changed; the approval stays pending.',
  InvalidOptions:
    'An option of `createAgent`, `defineTool`, an adapter or an observer that is wrong: the message names its path (a misspelled key too).',
  StaleVersion:
    "`resolveApproval` quoted another version than the one the call's approval was requested at: read `pendingApprovals()` again and quote its `version`.",
  UnknownToolCall: '`resolveApproval` named a tool call that is not waiting for an approval.',
  StoreCorrupted:
    'A stored session or file that cannot be read back (truncated, damaged); never a silent empty session.',
  StoreUnavailable: 'The store cannot be opened or reached (a path that cannot be created, a database that refuses).',
  StoreFailed:
    'From `agent.flush()` and later calls after a step could not be written; the run ended `failed` with `error.code: storeFailed`.',
  SessionBusy:
    'A run of this session is in progress in another agent (the message names the owner and the expiry): an idle agent holds nothing, so retry when that run ends.',
  SessionLost:
    'A newer owner took the session over; this agent writes nothing more (its run ended with `sessionLost`).',
  SessionNotFound: '`forkSession` or a step read named a session the store does not have.',
  MissingDependency:
    'An optional peer dependency an entry point needs is not installed; the message names the package and the `npm install` command.',
  McpUnavailable: 'An MCP server could not be started or reached when its toolset connected.',
  McpToolConflict:
    'An MCP server lists one tool name twice, so two of its tools would get the same name in the agent (names that only reduce alike are told apart by a hash).',
};

/** What each error kind of a model attempt means (its retryability is the code's, `isRetryableKind`). */
const ERROR_KINDS: Record<ErrorKind, string> = {
  rateLimit: "HTTP 429: the provider's rate limit (its `retry-after` is honoured).",
  overloaded: 'HTTP 5xx other than 502/504 (529 too): the provider could not serve.',
  network: 'HTTP 502 or a broken connection.',
  timeout: 'HTTP 408/504, or the stream stayed silent for `timeouts.modelIdleMs`.',
  invalidResponse: 'A stream that broke its contract: a wrong event shape, a duplicate tool-call start, a throw.',
  contextOverflow: 'The request was too long for the model: overflow recovery compacts it and re-runs the turn once.',
  auth: 'HTTP 401/403, or an exhausted quota.',
  badRequest: 'Another HTTP 4xx: the request itself is wrong.',
  aborted: 'The run was aborted (`agent.abort(reason)`: the reason is the message).',
  unknown: 'A failure no rule classified.',
  internal: 'A throw inside agentchart itself: the run ends at once, every published tool call answered.',
};

const RUN_STOPS: Record<Exclude<RunErrorCode, ErrorKind>, string> = {
  storeFailed: 'A step could not be written to the store (disk full, a refused version): the run stops at once.',
  sessionLost: 'Another agent took the session over (its lease expired): this one stops before its next step.',
};

const FAILURE_ONLY: Record<Exclude<FailureCode, RunErrorCode>, string> = {
  reportTurnWithoutWork: 'Report mode: a turn ran no tool that counts; it is re-run once with guidance.',
};

function errorKindRows(kinds: readonly RunErrorCode[]): string[] {
  return kinds.map((code) => {
    if (code in RUN_STOPS) return `| \`${code}\` | no | ${RUN_STOPS[code as keyof typeof RUN_STOPS]} |`;
    const kind = code as ErrorKind;
    const retry = kind === 'contextOverflow' ? 'recovery' : isRetryableKind(kind) ? 'yes' : 'no';
    return `| \`${code}\` | ${retry} | ${ERROR_KINDS[kind]} |`;
  });
}

const REGIONS: Record<string, () => string> = {
  'agent-error-codes': () =>
    [
      '| `error.code` | when, and what to do |',
      '|---|---|',
      ...Object.entries(AGENT_ERRORS).map(([code, text]) => `| \`${code}\` | ${text} |`),
    ].join('\n'),
  'run-error-codes': () =>
    ['| `result.error.code` | retried | meaning |', '|---|---|---|', ...errorKindRows(RunErrorCodeSchema.options)].join(
      '\n',
    ),
  'failure-codes': () =>
    [
      '| `counters.failureCodes` key | counts |',
      '|---|---|',
      ...FailureCodeSchema.options.map((code) =>
        code in FAILURE_ONLY
          ? `| \`${code}\` | ${FAILURE_ONLY[code as keyof typeof FAILURE_ONLY]} |`
          : code in RUN_STOPS || code === 'internal'
            ? `| \`${code}\` | runs the runtime ended this way |`
            : `| \`${code}\` | failed model attempts of this kind (retried ones included) |`,
      ),
    ].join('\n'),
  bench: benchRegion,
};

interface Sampled {
  median: number;
}
interface PeerFigures {
  pi?: { wall: Sampled; ratio: number };
  aiSdk?: { wall: Sampled; ratio: number };
}
interface BenchResults {
  generatedAt: string;
  environment: {
    node: string;
    cpus: number;
    cpuModel: string;
    commit: string;
    durationSeconds: number;
    loadDuring?: { median: number };
  };
  perTurn: { agentchart: Sampled; hand: Sampled; peers?: PeerFigures };
  perTool: { agentchart: Sampled; hand: Sampled; peers?: PeerFigures };
  batch: Record<string, { agentchart: Sampled; hand: Sampled }>;
  sessions: { sessions: number; totalLiveMB: { agentchart: number } };
  stores: Record<string, { p50Us: number; p99Us: number }>;
  relay: { updatesPerSecond: { agentchart: Sampled } };
  agentCreationUs: Sampled;
  peers: { versions: { pi: string; aiSdk: string } };
}

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

/** A loaded machine stretches every figure: the region says how loaded it was. */
const load = (during: { median: number } | undefined) =>
  during ? ` (1-minute load average ${fmt(during.median, 1)} during the run, median)` : '';

function benchRegion(): string {
  const r = JSON.parse(readFileSync(`${ROOT}bench/results.json`, 'utf8')) as BenchResults;
  const restate = JSON.parse(readFileSync(`${ROOT}bench/restate-results.json`, 'utf8')) as {
    overheadMs: { perPrompt: number; perTurn: number; perToolCall: { safe: number; never: number } };
  };
  const env = r.environment;
  const peer = (figure: { wall: Sampled; ratio: number } | undefined) =>
    figure ? `${fmt(figure.wall.median)} µs (agentchart / peer ${fmt(figure.ratio, 2)} ×)` : '—';
  const rows = [
    ['a turn (T=200 × K=1)', `${fmt(r.perTurn.agentchart.median)} µs`, `${fmt(r.perTurn.hand.median)} µs`],
    ['a tool call (T=50 × K=20)', `${fmt(r.perTool.agentchart.median)} µs`, `${fmt(r.perTool.hand.median)} µs`],
    ...Object.entries(r.batch).map(([k, figures]) => [
      `a tool call in one batch of K=${fmt(Number(k))}`,
      `${fmt(figures.agentchart.median)} µs`,
      `${fmt(figures.hand.median)} µs`,
    ]),
    ['`createAgent`', `${fmt(r.agentCreationUs.median)} µs`, '—'],
  ];
  return [
    `Measured by \`npm run bench\` at commit ${env.commit} (${r.generatedAt.slice(0, 10)}), Node ${env.node}, ` +
      `${env.cpus} × ${env.cpuModel}, a shared machine${load(env.loadDuring)}: medians of interleaved rounds. The workload: the scripted ` +
      'model with no delay and instant tools, so what is measured is the loop itself.',
    '',
    '| cost of | agentchart | a hand-written loop doing the same bookkeeping |',
    '|---|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    `Beside the peers (same process, same workload): ${r.peers.versions.pi} per turn ` +
      `${peer(r.perTurn.peers?.pi)}, per tool call ${peer(r.perTool.peers?.pi)}; ` +
      `${r.peers.versions.aiSdk} (\`streamText\`) per turn ${peer(r.perTurn.peers?.aiSdk)}, ` +
      `per tool call ${peer(r.perTool.peers?.aiSdk)}.`,
    '',
    `- ${fmt(r.sessions.sessions, 0)} idle sessions in one process: ${fmt(r.sessions.totalLiveMB.agentchart)} MB.`,
    `- A step written to the store, p50 / p99: ${Object.entries(r.stores)
      .map(([store, s]) => `${store} ${fmt(s.p50Us / 1000, 3)} / ${fmt(s.p99Us / 1000, 2)} ms`)
      .join(', ')}.`,
    `- Progress updates through the awaited relay: ${fmt(r.relay.updatesPerSecond.agentchart.median, 0)} per second, none dropped.`,
    `- On Restate instead of in-process: ${fmt(restate.overheadMs.perPrompt)} ms more per prompt, ` +
      `${fmt(restate.overheadMs.perTurn)} ms per turn, ${fmt(restate.overheadMs.perToolCall.safe)}–` +
      `${fmt(restate.overheadMs.perToolCall.never)} ms per tool call (a journaled step each).`,
  ].join('\n');
}

/** The page with every region it marks rewritten. */
export function withRegions(page: string, markdown: string): string {
  return markdown.replace(/<!-- generated:([\w-]+) -->\n[\s\S]*?<!-- \/generated:\1 -->/g, (_, name: string) => {
    const build = REGIONS[name];
    if (!build) throw new Error(`${page}: no generated region is called "${name}"`);
    return `<!-- generated:${name} -->\n${build()}\n<!-- /generated:${name} -->`;
  });
}

/** The pages holding generated regions. */
export const REGION_PAGES = ['docs/errors.md', 'docs/performance.md'];

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const page of REGION_PAGES) {
    const path = `${ROOT}${page}`;
    writeFileSync(path, withRegions(page, readFileSync(path, 'utf8')));
    console.log(page);
  }
}
