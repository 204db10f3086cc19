import type { MachineOutlineNode } from '../../trace/format.js';
import type {
  ControlCommand,
  ControlResponse,
  SessionInfo,
  SessionView,
  StepView,
  StreamMessage,
} from '../protocol.js';
import type { ForkResult } from '../../store/fork.js';
import { addReceipt, ApprovalCards } from './controls.js';
import { ConversationView, turnInFlight } from './conversation.js';
import { renderCounters } from './counters.js';
import { byId, h, plural } from './dom.js';
import { EVENT_KINDS, renderEventLog, type EventLogFilter } from './event-log.js';
import { createMachineCharts, lightCharts } from './machines.js';
import { drawTimeline, drawTravelBar, readStream, renderQueues, StreamRefused, type TimelineCache } from './panels.js';
import { applyDelta, openTurnEvents, sessionFromHello, stepIndexOfEvent, type PageSession } from './session.js';

/**
 * The studio page's controller: the session list, the stream of the session shown, time travel
 * and the controls. `window.agentchartStudio` lets a script (the tests) see what it shows.
 */

interface StudioConfig {
  outlines: Record<string, MachineOutlineNode>;
}

interface Travel {
  index: number;
  step: StepView;
}

export interface StudioPageApi {
  readonly sessionId: string | null;
  readonly session: PageSession | null;
  readonly travel: Travel | null;
  /** Milliseconds from the page's start to its first complete drawing of the session shown. */
  readonly openedInMs: number | null;
  /** When (ms from the page's start) the first snapshot arrived and was read. */
  readonly helloInMs: number | null;
  select(id: string): void;
  goToStep(index: number): Promise<void>;
  live(): void;
}

export function startStudioPage(): StudioPageApi {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const config = JSON.parse(byId('studio-config').textContent ?? '{}') as StudioConfig;
  const svgs = new Map<string, string>();
  for (const template of Array.from(document.querySelectorAll<HTMLTemplateElement>('template[data-chart-machine]')))
    svgs.set(template.dataset.chartMachine ?? '', template.innerHTML);
  const charts = createMachineCharts(byId('charts'), config.outlines, svgs);
  const conversation = new ConversationView(byId('history'), byId('inflight'));
  const receipts = byId('receipts');
  const filter: EventLogFilter = { kinds: new Set(Object.keys(EVENT_KINDS)), text: '' };

  let sessions: SessionInfo[] = [];
  let selected: string | null = null;
  /** How many times a session was chosen: a list asked for before the latest choice must not undo it. */
  let choices = 0;
  let session: PageSession | null = null;
  let travel: Travel | null = null;
  let stream: AbortController | null = null;
  let openedInMs: number | null = null;
  let helloInMs: number | null = null;
  let drawnCounters: SessionView['counters'] | null = null;
  let timeline: TimelineCache | null = null;
  let frameRequested = false;

  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(path, {
      ...init,
      headers: { 'x-agentchart-token': token, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
    const text = await response.text();
    const body = text === '' ? null : (JSON.parse(text) as T);
    if (!response.ok && !(body && typeof body === 'object' && 'ok' in body)) {
      throw new Error(`${path}: HTTP ${response.status}${text ? ` ${text}` : ''}`);
    }
    return body as T;
  };
  const showError = (message: string | null) => {
    const box = byId('error');
    box.textContent = message ?? '';
    box.hidden = message === null;
  };
  const setConnection = (state: 'connecting' | 'live' | 'closed' | 'stored', text: string) => {
    const element = byId('connection');
    element.dataset.state = state;
    element.textContent = text;
  };

  // ---- sessions -----------------------------------------------------------------------------
  const refreshSessions = async () => {
    const choicesBefore = choices;
    try {
      sessions = await api<SessionInfo[]>('/api/sessions');
    } catch (error) {
      showError(`Could not list the sessions: ${(error as Error).message}`);
      return;
    }
    const select = byId<HTMLSelectElement>('session-select');
    const options = sessions.map((info) =>
      h(
        'option',
        { value: info.id, selected: info.id === selected },
        `${info.live ? '● ' : ''}${info.label}${info.running ? ' (running)' : ''}${info.stored && !info.live ? ' · stored' : ''}`,
      ),
    );
    select.replaceChildren(...options);
    // A session chosen while the list was on its way (one attached since, named in the address) is
    // newer than the list: it stays; the next list has it.
    if (choices !== choicesBefore) {
      if (selected !== null) select.value = selected;
      return;
    }
    // The session the page waits for (it had none of that name) is there now.
    if (selected !== null && stream === null && sessions.some((info) => info.id === selected)) return connect(selected);
    if (selected === null || !sessions.some((info) => info.id === selected)) {
      const wanted = new URLSearchParams(location.hash.slice(1)).get('session');
      const first = sessions.find((info) => info.id === wanted) ?? sessions.find((info) => info.live) ?? sessions[0];
      if (first && first.id !== selected) choose(first.id);
      if (!first) setConnection('closed', 'no sessions yet');
    }
  };

  const choose = (id: string) => {
    if (id === selected && stream) return;
    choices += 1;
    selected = id;
    session = null;
    travel = null;
    timeline = null;
    drawnCounters = null;
    receipts.replaceChildren();
    history.replaceState(null, '', `${location.pathname}${location.search}#session=${encodeURIComponent(id)}`);
    byId<HTMLSelectElement>('session-select').value = id;
    connect(id);
  };

  // ---- the stream ---------------------------------------------------------------------------
  const connect = (id: string) => {
    stream?.abort();
    const controller = new AbortController();
    stream = controller;
    setConnection('connecting', 'connecting…');
    void (async () => {
      let gone = false;
      try {
        await readStream(id, token, controller.signal, receive);
      } catch (error) {
        if (controller.signal.aborted) return;
        gone = error instanceof StreamRefused && error.status === 404;
        showError(
          gone
            ? `There is no session "${id}" now (its agent closed, or has not started): it is shown once the studio lists it`
            : `The stream of "${id}" broke: ${(error as Error).message}`,
        );
      }
      if (controller.signal.aborted || stream !== controller) return;
      if (gone) {
        // Not asked for again until the list has it (read every few seconds); meanwhile the list may pick another.
        stream = null;
        setConnection('closed', 'waiting for the session');
        void refreshSessions();
        return;
      }
      // The server ended the stream (the session became live, or the studio restarts): read it again.
      setConnection('closed', 'reconnecting…');
      stream = null;
      setTimeout(() => {
        if (selected === id && stream === null) {
          void refreshSessions();
          connect(id);
        }
      }, 500);
    })();
  };

  const receive = (message: StreamMessage | { error: string }) => {
    if ('error' in message) {
      showError(message.error);
      return;
    }
    if ('hello' in message) {
      const wasTraveling = travel;
      session = sessionFromHello(message.hello);
      helloInMs ??= performance.now();
      timeline = null;
      showError(null);
      if (wasTraveling && session.steps) void goToStep(wasTraveling.index);
    } else if (session) {
      applyDelta(session, message.delta);
      if (message.delta.info) void refreshSessions();
    }
    if (session) setConnection(session.info.live ? 'live' : 'stored', session.info.live ? 'live' : 'stored session');
    scheduleRender();
  };

  // ---- time travel --------------------------------------------------------------------------
  const refreshSteps = async () => {
    if (!session?.info.stored || selected === null) return;
    const current = session;
    current.steps = await api<PageSession['steps']>(`/api/steps?id=${encodeURIComponent(selected)}`);
    scheduleRender();
  };
  const goToStep = async (requested: number) => {
    if (!session?.info.stored || selected === null) return;
    const id = selected;
    // A live session's steps grow: the list is read again before travelling.
    await refreshSteps();
    const steps = session.steps ?? [];
    if (steps.length === 0) return;
    const index = Math.min(Math.max(Math.trunc(requested), 0), steps.length - 1);
    const summary = steps[index];
    if (!summary) return;
    const step = await api<StepView>(`/api/step?id=${encodeURIComponent(id)}&version=${summary.version}`);
    if (selected !== id) return;
    travel = { index, step };
    byId('fork-result').textContent = '';
    scheduleRender();
  };
  const goLive = () => {
    travel = null;
    scheduleRender();
  };
  const fork = async () => {
    if (!travel || selected === null) return;
    const target = byId('fork-result');
    target.textContent = 'forking…';
    const response = await api<{ ok: true; fork: ForkResult } | { ok: false; code: string; message: string }>(
      '/api/fork',
      { method: 'POST', body: JSON.stringify({ id: selected, version: travel.step.version }) },
    );
    if (!response.ok) {
      target.textContent = `fork refused: ${response.code} — ${response.message}`;
      return;
    }
    const { sessionId, version, events } = response.fork;
    const open = h('button', { type: 'button', id: 'open-fork', 'data-session': sessionId }, `open ${sessionId}`);
    open.addEventListener('click', () => choose(sessionId));
    target.replaceChildren(`forked step ${version} (${plural(events, 'event')}) into `, open);
    await refreshSessions();
  };

  // ---- controls -----------------------------------------------------------------------------
  const send = (request: ControlCommand): Promise<ControlResponse> =>
    selected === null
      ? Promise.resolve({ ok: false, code: 'NoSession', message: 'no session selected' })
      : api<ControlResponse>('/api/control', {
          method: 'POST',
          body: JSON.stringify({ ...request, id: selected }),
        }).catch((error: Error) => ({ ok: false as const, code: 'Network', message: error.message }));
  const approvals = new ApprovalCards(byId('approvals'), send, (what, response) =>
    addReceipt(receipts, what, response),
  );
  const textControl = (inputId: string, buttonId: string, action: 'steer' | 'followUp' | 'prompt') => {
    const input = byId<HTMLInputElement>(inputId);
    byId(buttonId).addEventListener('click', (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (text === '') return;
      input.value = '';
      const pending = addReceipt(receipts, `${action} "${text}"`, { ok: true });
      pending.querySelector('.answer')!.textContent = action === 'prompt' ? 'starting…' : 'waiting for its receipt…';
      void send({ action, text }).then((response) => {
        pending.replaceWith(addReceipt(receipts, `${action} "${text}"`, response));
        void refreshSessions();
      });
    });
  };
  textControl('steer-text', 'steer', 'steer');
  textControl('follow-up-text', 'follow-up', 'followUp');
  textControl('prompt-text', 'prompt', 'prompt');
  byId('abort').addEventListener('click', (event) => {
    event.preventDefault();
    void send({ action: 'abort', reason: 'aborted from the studio' }).then((response) =>
      addReceipt(receipts, 'abort', response),
    );
  });

  // ---- drawing ------------------------------------------------------------------------------
  const scheduleRender = () => {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      render();
    });
  };

  const render = () => {
    if (!session) return;
    const steps = session.steps ?? [];
    const view = travel ? travel.step.view : session.now;
    const events = travel ? session.events.slice(0, travel.step.events) : session.events;
    const cursor = events.length - 1;
    const turnValue = view.machines.turn?.value;
    const committed = travel
      ? (travel.step.turn?.committed ?? false)
      : view.machines.turn?.status === 'done' || isState(turnValue, 'RESPONSE') || isState(turnValue, 'done');
    const open = openTurnEvents(events);
    const turn = turnInFlight(open);
    conversation.render({
      history: view.history,
      turn,
      committed,
      waitingForModel: isState(turnValue, 'ASSISTANT') && !turn?.reply,
    });
    lightCharts(charts, view.machines);
    renderCounters(byId('counters'), view.counters, drawnCounters);
    drawnCounters = view.counters;
    timeline = drawTimeline(session.events, cursor, timeline);
    renderEventLog(byId('event-rows'), byId('event-status'), session.events, filter, cursor, (index) => {
      if (session?.steps) void goToStep(stepIndexOfEvent(session.steps, index));
    });
    renderQueues(view.queues);
    const controllable = session.info.controllable && !travel;
    approvals.render(view.approvals, controllable);
    for (const id of ['steer', 'steer-text', 'follow-up', 'follow-up-text'])
      (byId(id) as HTMLButtonElement).disabled = !controllable;
    for (const id of ['prompt', 'prompt-text'])
      (byId(id) as HTMLButtonElement).disabled = !controllable || view.running;
    (byId('abort') as HTMLButtonElement).disabled = !controllable || !view.running;
    drawTravelBar(steps, session.info.stored, travel);
    const badges = [
      session.info.live ? 'live' : 'stored',
      view.running ? 'running' : 'idle',
      session.info.stored ? 'time travel' : 'no store: no time travel',
    ];
    byId('session-badges').replaceChildren(
      ...badges.map((badge) => h('span', { class: `badge ${badge.replace(/[^a-z]+/g, '-')}` }, badge)),
    );
    byId('summary').textContent =
      `${plural(session.events.length, 'event')}${session.eventsDropped > 0 ? ` (+${session.eventsDropped} before the studio attached)` : ''} · ${plural(view.history.length, 'message')}${session.steps && !session.info.live ? ` · ${plural(steps.length, 'step')}` : ''}`;
    document.body.classList.add('loaded');
    document.body.classList.toggle('traveling', travel !== null);
    // Last: everything above may have changed the scrollers' sizes.
    if (!travel) followEnds();
    if (openedInMs === null) {
      openedInMs = -1;
      // Once the frame is painted (style, layout and paint of the first drawing included).
      requestAnimationFrame(() =>
        setTimeout(() => {
          openedInMs = performance.now();
          document.body.dataset.openedInMs = openedInMs.toFixed(1);
        }, 0),
      );
    }
  };

  // The conversation and the event log follow their end while live, until a person scrolls up
  // (a scroll right after a wheel, a key or a touch on it); scrolling back to the end follows again.
  const following = new Map<HTMLElement, boolean>();
  for (const scroller of [byId('conversation'), byId('event-scroll')]) {
    following.set(scroller, true);
    let touchedAt = 0;
    for (const type of ['wheel', 'keydown', 'pointerdown', 'touchstart'])
      scroller.addEventListener(type, () => (touchedAt = performance.now()), { passive: true });
    scroller.addEventListener('scroll', () => {
      if (performance.now() - touchedAt > 1_000) return;
      following.set(scroller, scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 30);
    });
  }
  const followEnds = () => {
    for (const [scroller, follow] of following) if (follow) scroller.scrollTop = scroller.scrollHeight;
  };

  // ---- wiring -------------------------------------------------------------------------------
  byId<HTMLSelectElement>('session-select').addEventListener('change', (event) =>
    choose((event.target as HTMLSelectElement).value),
  );
  const steps = () => session?.steps?.length ?? 0;
  byId('live').addEventListener('click', goLive);
  byId('first').addEventListener('click', () => void goToStep(0));
  byId('prev').addEventListener('click', () => void goToStep((travel?.index ?? steps()) - 1));
  byId('next').addEventListener('click', () =>
    travel && travel.index + 1 >= steps() ? goLive() : void goToStep((travel?.index ?? steps()) + 1),
  );
  byId('last').addEventListener('click', () => void goToStep(steps() - 1));
  byId('slider').addEventListener('input', (event) => void goToStep(Number((event.target as HTMLInputElement).value)));
  // A live session's steps grow: the slider's range is read again when a hand reaches for it.
  byId('slider').addEventListener('pointerdown', () => void refreshSteps());
  byId('fork').addEventListener('click', () => void fork());
  for (const kind of Object.keys(EVENT_KINDS)) {
    const box = h('input', { type: 'checkbox', checked: true, 'data-kind': kind }) as HTMLInputElement;
    box.addEventListener('change', () => {
      if (box.checked) filter.kinds.add(kind);
      else filter.kinds.delete(kind);
      scheduleRender();
    });
    byId('event-kinds').append(h('label', {}, box, ` ${kind}`));
  }
  byId('event-search').addEventListener('input', (event) => {
    filter.text = (event.target as HTMLInputElement).value;
    scheduleRender();
  });

  window.addEventListener('hashchange', () => {
    const wanted = new URLSearchParams(location.hash.slice(1)).get('session');
    if (wanted && wanted !== selected) choose(wanted);
  });
  // A session named in the address is read at once, while the list of sessions is asked for.
  const named = new URLSearchParams(location.hash.slice(1)).get('session');
  if (named) choose(named);
  void refreshSessions();
  setInterval(() => void refreshSessions(), 3_000);

  const pageApi: StudioPageApi = {
    get sessionId() {
      return selected;
    },
    get session() {
      return session;
    },
    get travel() {
      return travel;
    },
    get openedInMs() {
      return openedInMs === -1 ? null : openedInMs;
    },
    get helloInMs() {
      return helloInMs;
    },
    select: choose,
    goToStep,
    live: goLive,
  };
  (window as Window & { agentchartStudio?: StudioPageApi }).agentchartStudio = pageApi;
  return pageApi;
}

/** Whether a state value is, or is inside, the top-level state `name`. */
function isState(value: unknown, name: string): boolean {
  if (typeof value === 'string') return value === name;
  return typeof value === 'object' && value !== null && name in value;
}
