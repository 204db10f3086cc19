import { readFile, writeFile } from 'node:fs/promises';
import type { InspectionEvent, Observer } from 'xstate';
import type { AgentEvent } from '../index.js';
import { viewerHtml } from '../trace.js';
import { recordTrace, startInspector, type FileTraceRecorder, type Inspector } from '../inspect.js';

/** `npm run demo -- --inspect` (live XState inspector) and `--trace out.jsonl` (offline trace + viewer page). */

export interface InstrumentArgs {
  inspect: boolean;
  /** 0: any free port. */
  inspectPort: number;
  trace: string | null;
}

export function parseInstrumentArgs(argv: readonly string[]): InstrumentArgs {
  const args: InstrumentArgs = { inspect: false, inspectPort: 0, trace: null };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--inspect') args.inspect = true;
    else if (arg.startsWith('--inspect-port=')) {
      args.inspect = true;
      args.inspectPort = Number(arg.slice('--inspect-port='.length));
      if (!Number.isInteger(args.inspectPort) || args.inspectPort < 0 || args.inspectPort > 65_535)
        throw new Error(`--inspect-port needs a port number, got "${arg}"`);
    } else if (arg === '--trace' || arg.startsWith('--trace=')) {
      const file = arg === '--trace' ? argv[++index] : arg.slice('--trace='.length);
      if (!file || file.startsWith('--')) throw new Error('--trace needs a file name, e.g. --trace out.jsonl');
      args.trace = file;
    }
  }
  return args;
}

export interface DemoInstrumentation {
  inspect?: Observer<InspectionEvent>;
  onEvent?: (event: AgentEvent) => void;
  /** Closes the trace (and writes its viewer page), stops the inspector: the process can exit. */
  finish(): Promise<void>;
}

export interface InstrumentIo {
  say(line: string): void;
  /** A person at a terminal: wait for them (Enter) before starting and before stopping the inspector. */
  interactive: boolean;
  /** Resolves when the person presses Enter. */
  waitForEnter(): Promise<void>;
}

export async function instrumentDemo(args: InstrumentArgs, io: InstrumentIo): Promise<DemoInstrumentation> {
  const trace: FileTraceRecorder | null = args.trace ? recordTrace(args.trace) : null;
  let inspector: Inspector | null = null;
  try {
    if (args.inspect) inspector = await startInspector({ port: args.inspectPort });
  } catch (error) {
    await trace?.close();
    throw error;
  }
  if (inspector) {
    io.say(
      `XState inspector: open ${inspector.url} (Stately's inspector UI; it needs internet, the relay listens on 127.0.0.1 only)`,
    );
    if (io.interactive) {
      io.say('Open it, then press Enter to start the session (a page opened later replays it).');
      await io.waitForEnter();
    }
  }
  const observers = [trace?.inspect, inspector?.inspect].filter(
    (observer): observer is Observer<InspectionEvent> => observer !== undefined,
  );
  return {
    ...(observers.length > 0
      ? { inspect: { next: (event: InspectionEvent) => observers.forEach((observer) => observer.next?.(event)) } }
      : {}),
    ...(trace ? { onEvent: (event: AgentEvent) => trace.events.next?.(event) } : {}),
    async finish() {
      if (trace) {
        const { entries } = await trace.close();
        const page = viewerPathFor(trace.path);
        await writeFile(
          page,
          viewerHtml({
            trace: await readFile(trace.path, 'utf8'),
            traceName: trace.path,
          }),
        );
        io.say(
          `trace: ${trace.path} (${entries} entries) · viewer: ${page} (open it in a browser; no network needed), or load the trace in visualizations/viewer.html`,
        );
      }
      if (inspector) {
        if (io.interactive && inspector.viewers > 0) {
          io.say('Press Enter to stop the inspector.');
          await io.waitForEnter();
        }
        await inspector.stop();
        io.say('inspector stopped');
      }
    },
  };
}

export function viewerPathFor(tracePath: string): string {
  return /\.(jsonl|ndjson)$/i.test(tracePath) ? tracePath.replace(/\.(jsonl|ndjson)$/i, '.html') : `${tracePath}.html`;
}
