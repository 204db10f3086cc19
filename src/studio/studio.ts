import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { masterMachine } from '../../machines/master.machine.js';
import { toolCallMachine } from '../../machines/tool-call.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { AgentError } from '../domain/errors.js';
import { createLocalEndpoint } from '../endpoint/guard.js';
import { createAgent, type Agent, type DurableOptions } from '../runtime/agent.js';
import { agentTap } from '../runtime/agent-tap.js';
import type { AgentOptions } from '../runtime/options.js';
import { forkSession } from '../store/fork.js';
import type { SessionStore } from '../store/types.js';
import { machineOutline } from '../trace/outline.js';
import { MACHINE_CHARTS } from '../trace/charts.generated.js';
import { control } from './controls.js';
import { LiveSession } from './live-session.js';
import { studioPageHtml } from './page-html.js';
import { STUDIO_SCRIPT } from './page-script.generated.js';
import type { ControlRequest, ForkRequest, SessionInfo } from './protocol.js';
import { answerError, json, readRequest, versionOf } from './requests.js';
import { StoredFeed } from './stored-feed.js';
import { StreamClient, type ClientStats } from './stream-client.js';
import { stepView, wireView } from './views.js';

export interface StudioOptions {
  /** Agents to show live (more with `attach`). */
  agents?: Agent[];
  /** A store whose sessions are listed and openable (time travel, fork). */
  store?: SessionStore;
  /** 0 (default): any free port. The studio listens on 127.0.0.1 only. */
  port?: number;
  /** Open the page in the default browser. Default false. */
  open?: boolean;
  /**
   * How the studio runs a stored session that no attached agent runs (a fork, a session of the
   * CLI's store): the agent's options for that session id, without `store` and `sessionId`. Without
   * it, such sessions are read-only (time travel and fork still work).
   */
  agentFor?: (sessionId: string) => AgentOptions | Promise<AgentOptions>;
  /** The page's title. */
  title?: string;
}

export interface Studio {
  /** Open this in a browser: it carries the per-start token the server requires. */
  readonly url: string;
  /** Shows an agent live (its session id names it when it has one, else `label`). Returns its key on the page. */
  attach(agent: Agent, options?: { label?: string }): string;
  /**
   * Readers of the studio's streams and how far behind they are, and the time the agents' thread
   * spent sending their changes to them so far (its flushes and socket writes, ms; diagnostics).
   */
  stats(): { clients: ClientStats[]; flushMs: number };
  /** Closes every stream and the server, and the agents the studio opened itself (`agentFor`). */
  stop(): Promise<void>;
}

/**
 * The studio: one local page that shows agents live (their charts lit as transitions happen, the
 * conversation as it streams, the timeline, the counters, the event log), lets a person answer
 * approvals, steer, follow up and abort through the agents' public API, and rewinds any stored
 * session to any step — and forks it there.
 */
export async function startStudio(options: StudioOptions = {}): Promise<Studio> {
  const endpoint = createLocalEndpoint({ port: options.port });
  const live = new Map<string, LiveSession>();
  const feeds = new Map<string, StoredFeed>();
  const clients = new Set<StreamClient>();
  /** Which store holds a stored session (the studio's, or the store of an attached agent). */
  const storeOf = new Map<string, SessionStore>();
  let counter = 0;
  let stopping: Promise<void> | null = null;
  const page = studioPageHtml({
    script: STUDIO_SCRIPT,
    charts: MACHINE_CHARTS,
    outlines: {
      master: machineOutline(masterMachine),
      turn: machineOutline(turnMachine),
      toolCall: machineOutline(toolCallMachine),
    },
    ...(options.title ? { title: options.title } : {}),
  });

  /** The studio's store and those of the agents attached (kept once an agent closed: its session stays browsable). */
  const knownStores = new Set<SessionStore>(options.store ? [options.store] : []);

  const attach = (agent: Agent, attachOptions: { label?: string } = {}, owned = false): string => {
    if (stopping) throw stoppedError('studio.attach: ');
    const tap = agentTap(agent);
    if (!tap) throw new AgentError('InvalidInput', 'studio.attach: not an agent made by createAgent');
    const id = tap.sessionId ?? `live-${++counter}`;
    if (live.has(id)) {
      if (live.get(id)?.agent === agent) return id;
      throw new AgentError('InvalidInput', `studio.attach: session "${id}" is already shown by another agent`);
    }
    const label = attachOptions.label ?? (tap.sessionId ? tap.sessionId : `agent ${counter}`);
    const session = new LiveSession(id, label, agent, tap, owned);
    live.set(id, session);
    if (tap.store) knownStores.add(tap.store);
    if (tap.store && tap.sessionId) storeOf.set(tap.sessionId, tap.store);
    // A closed agent is let go (its events, the agent itself): its pages' streams end, and a stored
    // session opens again as stored.
    void tap.closed.then(() => {
      if (live.get(id) !== session) return;
      live.delete(id);
      session.stop();
    });
    // Pages reading the stored session read it again from the agent.
    feeds.get(id)?.close();
    feeds.delete(id);
    return id;
  };
  for (const agent of options.agents ?? []) attach(agent);

  const list = async (): Promise<SessionInfo[]> => {
    const infos = new Map<string, SessionInfo>();
    for (const session of live.values()) infos.set(session.id, session.info());
    for (const store of knownStores) {
      for (const summary of await store.list()) {
        const known = infos.get(summary.sessionId);
        if (!storeOf.has(summary.sessionId)) storeOf.set(summary.sessionId, store);
        if (known) {
          infos.set(summary.sessionId, { ...known, version: summary.version, updatedAt: summary.updatedAt });
          continue;
        }
        infos.set(summary.sessionId, storedInfo(summary.sessionId, summary));
      }
    }
    return [...infos.values()].sort(
      (a, b) => Number(b.live) - Number(a.live) || (b.updatedAt ?? 0) - (a.updatedAt ?? 0),
    );
  };
  const storedInfo = (
    id: string,
    summary: { version: number; running: boolean; updatedAt: number } | null,
  ): SessionInfo => ({
    id,
    label: id,
    live: false,
    stored: true,
    running: summary?.running ?? false,
    controllable: options.agentFor !== undefined && storeOf.get(id) === options.store,
    version: summary?.version ?? null,
    updatedAt: summary?.updatedAt ?? null,
  });

  /** The stored session's store, found by listing them if it is not known yet. */
  const storeFor = async (id: string): Promise<SessionStore | null> => {
    if (!storeOf.has(id)) await list();
    return storeOf.get(id) ?? null;
  };

  /** Agents `agentFor` is opening, by session: pages asking at once share one (a session has one agent). */
  const opening = new Map<string, Promise<LiveSession>>();

  /** The live session to control: an attached agent, or one `agentFor` opens on the studio's store. */
  const liveFor = async (id: string): Promise<LiveSession> => {
    const known = live.get(id);
    if (known) return known;
    const store = await storeFor(id);
    if (!store) throw new AgentError('SessionNotFound', `no session "${id}"`);
    if (!options.agentFor || store !== options.store) {
      throw new AgentError(
        'NotReady',
        `session "${id}" is read-only here: no agent runs it (startStudio({ agentFor }) lets the studio open one)`,
      );
    }
    let open = live.get(id) ? Promise.resolve(live.get(id) as LiveSession) : opening.get(id);
    if (!open) {
      open = openAgent(id, store, options.agentFor).finally(() => opening.delete(id));
      opening.set(id, open);
    }
    return open;
  };

  const openAgent = async (
    id: string,
    store: SessionStore,
    agentFor: NonNullable<StudioOptions['agentFor']>,
  ): Promise<LiveSession> => {
    const agentOptions = await agentFor(id);
    if (stopping) throw stoppedError();
    const agent = createAgent({ ...agentOptions, store, sessionId: id } as AgentOptions & DurableOptions);
    try {
      await agent.ready;
      // Refused once the studio stopped meanwhile: then the agent is closed here, as nothing else will.
      attach(agent, {}, true);
    } catch (error) {
      await agent.close().catch(() => {});
      throw error;
    }
    return live.get(id) as LiveSession;
  };

  const stream = async (id: string, response: ServerResponse) => {
    let session: LiveSession | StoredFeed | undefined = live.get(id) ?? feeds.get(id);
    if (!session) {
      const store = await storeFor(id);
      if (!store) return json(response, 404, { ok: false, code: 'SessionNotFound', message: `no session "${id}"` });
      // The page may have hung up, or another page (or an agent) come, while the store was looked up.
      if (response.destroyed || stopping) return void response.end();
      session = live.get(id) ?? feeds.get(id);
      if (!session) {
        const feed = new StoredFeed(id, store, () => storedInfo(id, null));
        feeds.set(id, feed);
        session = feed;
      }
    }
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    response.flushHeaders();
    const target = session;
    const client = new StreamClient(id, response, (c) => target.resync(c));
    clients.add(client);
    response.on('close', () => {
      clients.delete(client);
      target.leave(client);
      if (target instanceof StoredFeed && target.readers === 0 && feeds.get(id) === target) {
        target.close();
        feeds.delete(id);
      }
    });
    target.join(client);
  };

  const stepOf = async (id: string, version: number, response: ServerResponse) => {
    const store = await storeFor(id);
    const step = store?.loadStep ? await store.loadStep(id, version) : null;
    if (!step)
      return json(response, 404, { ok: false, code: 'InvalidInput', message: `no step ${version} of "${id}"` });
    const { view, ...rest } = stepView(step);
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(`${JSON.stringify(rest).slice(0, -1)},"view":${wireView(view)}}`);
  };

  const fork = async (request: ForkRequest): Promise<unknown> => {
    const store = await storeFor(request.id);
    if (!store) throw new AgentError('SessionNotFound', `no stored session "${request.id}"`);
    const to = request.to ?? `${request.id}-fork-${request.version ?? 'latest'}-${randomBytes(3).toString('hex')}`;
    const result = await forkSession(store, { from: request.id, to, version: request.version });
    storeOf.set(to, store);
    return { ok: true, fork: result };
  };

  const routes = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', endpoint.origin);
    const id = url.searchParams.get('id') ?? '';
    const route = `${request.method} ${url.pathname}`;
    switch (route) {
      case 'GET /':
        response.setHeader(
          'content-security-policy',
          "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; frame-ancestors 'none'",
        );
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return void response.end(page);
      case 'GET /api/sessions':
        return json(response, 200, await list());
      case 'GET /api/stream':
        return stream(id, response);
      case 'GET /api/steps': {
        const store = await storeFor(id);
        return json(response, 200, store?.steps ? await store.steps(id) : null);
      }
      case 'GET /api/step':
        return stepOf(id, versionOf(url.searchParams.get('version')), response);
      case 'POST /api/control': {
        const body = await readRequest<ControlRequest>(request);
        return json(response, 200, await control(await liveFor(body.id), body));
      }
      case 'POST /api/fork':
        return json(response, 200, await fork(await readRequest<ForkRequest>(request)));
      default:
        return json(response, 404, { ok: false, code: 'NotFound', message: route });
    }
  };

  const server = createServer(
    endpoint.guard((request, response) => {
      routes(request, response).catch((error: unknown) => answerError(response, error));
    }),
  );
  await endpoint.listen(server);
  const url = endpoint.url('/');
  if (options.open) openInBrowser(url);

  return {
    url,
    attach: (agent, attachOptions) => attach(agent, attachOptions),
    stats: () => ({
      clients: [...clients].map((client) => client.stats()),
      flushMs: [...live.values()].reduce((sum, session) => sum + session.flushMs, 0),
    }),
    stop() {
      stopping ??= (async () => {
        for (const client of clients) client.end();
        for (const feed of feeds.values()) feed.close();
        for (const session of live.values()) session.stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.all(
          [...live.values()].filter((session) => session.owned).map((session) => session.agent.close().catch(() => {})),
        );
        live.clear();
      })();
      return stopping;
    },
  };
}

const stoppedError = (what = '') => new AgentError('Closed', `${what}the studio was stopped`);

/** The platform's opener, detached; a machine without one just prints the URL (the caller does). */
function openInBrowser(url: string): void {
  void import('node:child_process').then(({ spawn }) => {
    const [command, args] =
      process.platform === 'darwin'
        ? ['open', [url]]
        : process.platform === 'win32'
          ? ['cmd', ['/c', 'start', '', url]]
          : ['xdg-open', [url]];
    try {
      const child = spawn(command, args as string[], { detached: true, stdio: 'ignore' });
      child.on('error', () => {});
      child.unref();
    } catch {
      // No opener: the URL is printed by the caller.
    }
  });
}
