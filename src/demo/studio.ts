import { memoryStore, type Agent, type Model, type ModelStreamEvent, type SessionStore } from '../index.js';
import { startStudio, type Studio } from '../studio.js';
import { scriptedModel, type Clock } from '../testing.js';
import { demoTools } from './tools.js';
import { Workspace } from './workspace.js';

/**
 * `npm run demo -- --studio`: the demo session shown in the studio. The session is stored (a
 * memory store) so the page can rewind and fork it; the model streams live and everything runs
 * slower, so a person can watch the charts move; the write waits for an approval on the page.
 */

export interface StudioArgs {
  studio: boolean;
  /** 0: any free port. */
  port: number;
}

export function parseStudioArgs(argv: readonly string[]): StudioArgs {
  const args: StudioArgs = { studio: false, port: 0 };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--studio') args.studio = true;
    else if (arg === '--studio-port' || arg.startsWith('--studio-port=')) {
      const value = arg === '--studio-port' ? argv[++index] : arg.slice('--studio-port='.length);
      args.studio = true;
      args.port = Number(value);
      if (value === undefined || value === '' || !Number.isInteger(args.port) || args.port < 0 || args.port > 65_535)
        throw new Error(`--studio-port needs a port number, got ${JSON.stringify(value ?? '')}`);
    }
  }
  return args;
}

/** How much slower the demo runs in the studio: the tools' steps, the model's first token and each streamed piece. */
export const STUDIO_PACE = 6;
/** The session id the demo stores its session under. */
export const DEMO_SESSION = 'demo';

export interface DemoStudio {
  studio: Studio;
  store: SessionStore;
  /** The demo's clock, slowed down. */
  clock: Clock;
  /** The demo's model, each streamed piece `ms` apart on the clock. */
  pace(model: Model): Model;
}

export async function startDemoStudio(args: StudioArgs, clock: Clock): Promise<DemoStudio> {
  const store = memoryStore();
  const slow: Clock = {
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms * STUDIO_PACE),
    clearTimeout: (id) => clock.clearTimeout(id),
  };
  const studio = await startStudio({
    store,
    port: args.port,
    title: 'agentchart studio · demo',
    // A fork of the demo (or the demo session itself, once it ended) runs on a model that answers in kind.
    agentFor: () => ({
      model: pacedModel(
        scriptedModel((request) => ({ text: `(scripted model) You said: ${lastUserText(request.messages)}` }), {
          name: 'scripted-coder',
        }),
        slow,
      ),
      tools: demoTools(new Workspace(), slow),
      streaming: 'live',
      clock: slow,
    }),
  });
  return { studio, store, clock: slow, pace: (model) => pacedModel(model, slow) };
}

/** The studio shows the agent the demo creates. */
export function attachToStudio(studio: Studio, agent: Agent): void {
  studio.attach(agent, { label: 'demo session' });
}

/** Streams each event of `model` a little after the one before, so the text grows visibly. */
export function pacedModel(model: Model, clock: Clock, msPerEvent = 12): Model {
  return {
    name: model.name,
    ...(model.provider ? { provider: model.provider } : {}),
    ...(model.pricing ? { pricing: model.pricing } : {}),
    async *stream(request, options): AsyncIterable<ModelStreamEvent> {
      for await (const event of model.stream(request, options)) {
        if (event.type === 'textDelta' || event.type === 'thinkingDelta' || event.type === 'toolCallDelta') {
          await new Promise<void>((resolve) => clock.setTimeout(resolve, msPerEvent));
        }
        yield event;
      }
    },
  };
}

function lastUserText(messages: ReadonlyArray<{ role: string; content?: unknown }>): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : '…';
}
