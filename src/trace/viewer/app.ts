import type { TraceEntry } from '../format.js';
import { createChartPanels, highlightCharts, type ChartPanel } from './charts.js';
import {
  actorStatesAt,
  actorTitle,
  agentEntries,
  describeValue,
  readTraceText,
  type ViewerModel,
  type ViewerStep,
} from './model.js';
import { renderTimeline, formatMs } from './timeline.js';
import { buildTimeline, type TimelineData } from './timeline-model.js';

/**
 * The viewer page's controller: loads a trace (embedded, file input or drop), then walks its steps
 * with the buttons, the slider or the keyboard. `window.agentchartViewer` drives it from a script.
 */

export interface ViewerApi {
  load(text: string, name: string): boolean;
  goTo(step: number): void;
  readonly step: number;
  readonly stepCount: number;
}

interface Loaded {
  model: ViewerModel;
  timeline: TimelineData;
  panels: ChartPanel[];
  step: number;
}

const MAX_LISTED_ENTRIES = 40;

export function startViewer(doc: Document): ViewerApi {
  const byId = (id: string): HTMLElement => {
    const element = doc.getElementById(id);
    if (!element) throw new Error(`viewer page: #${id} is missing`);
    return element;
  };
  const fileInput = byId('trace-file') as HTMLInputElement;
  const slider = byId('slider') as HTMLInputElement;
  const svgs = new Map<string, string>();
  for (const template of Array.from(doc.querySelectorAll<HTMLTemplateElement>('template[data-chart-machine]'))) {
    svgs.set(template.dataset.chartMachine ?? '', template.innerHTML);
  }
  let loaded: Loaded | null = null;

  const showError = (message: string | null) => {
    const box = byId('error');
    box.textContent = message ?? '';
    box.hidden = message === null;
  };

  const load = (text: string, name: string): boolean => {
    let model: ViewerModel;
    try {
      model = readTraceText(text);
    } catch (error) {
      showError(`Could not read ${name}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    showError(null);
    doc.body.classList.add('loaded');
    byId('trace-name').textContent = name;
    const agent = agentEntries(model);
    const timeline = buildTimeline(agent);
    const last = model.entries.at(-1);
    byId('summary').textContent =
      `${model.actors.size} actors · ${model.steps.length} steps · ${timeline.turns.length} turns · ${agent.length} agent events · ${formatMs(last?.t ?? 0)}`;
    const panels = createChartPanels(doc, byId('charts'), model, svgs);
    slider.max = String(Math.max(model.steps.length - 1, 0));
    loaded = { model, timeline, panels, step: 0 };
    goTo(0);
    return true;
  };

  const goTo = (requested: number) => {
    if (!loaded) return;
    const { model } = loaded;
    const step = Math.min(Math.max(Math.trunc(requested), 0), Math.max(model.steps.length - 1, 0));
    loaded.step = step;
    const current: ViewerStep | null = model.steps[step] ?? null;
    const cursor = current
      ? { entry: current.entry, t: current.t }
      : { entry: model.entries.length - 1, t: model.entries.at(-1)?.t ?? 0 };
    const states = actorStatesAt(model, cursor.entry);
    highlightCharts(loaded.panels, model, states, current, cursor.entry);
    renderTimeline(doc, byId('timeline'), loaded.timeline, cursor);
    slider.value = String(step);
    byId('step-label').textContent =
      model.steps.length === 0
        ? 'no transitions recorded'
        : `step ${step + 1} / ${model.steps.length} · ${formatMs(cursor.t)}`;
    byId('step-title').textContent = current ? describeStep(model, current) : '';
    const previous = step > 0 ? model.steps[step - 1].entry : -1;
    renderEntries(doc, byId('step-entries'), model, model.entries.slice(previous + 1, cursor.entry + 1));
  };

  const move = (delta: number) => loaded && goTo(loaded.step + delta);
  byId('first').addEventListener('click', () => goTo(0));
  byId('prev').addEventListener('click', () => move(-1));
  byId('next').addEventListener('click', () => move(1));
  byId('last').addEventListener('click', () => loaded && goTo(loaded.model.steps.length - 1));
  slider.addEventListener('input', () => goTo(Number(slider.value)));
  doc.addEventListener('keydown', (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== 'range') return;
    const keys: Record<string, () => void> = {
      ArrowRight: () => move(1),
      ArrowLeft: () => move(-1),
      Home: () => goTo(0),
      End: () => loaded && goTo(loaded.model.steps.length - 1),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
  const readFile = (file: File) => {
    file.text().then(
      (text) => load(text, file.name),
      (error: unknown) =>
        showError(`Could not read ${file.name}: ${error instanceof Error ? error.message : String(error)}`),
    );
  };
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) readFile(file);
  });
  doc.addEventListener('dragover', (event) => event.preventDefault());
  doc.addEventListener('drop', (event) => {
    event.preventDefault();
    const file = event.dataTransfer?.files[0];
    if (file) readFile(file);
  });

  const api: ViewerApi = {
    load,
    goTo,
    get step() {
      return loaded?.step ?? 0;
    },
    get stepCount() {
      return loaded?.model.steps.length ?? 0;
    },
  };
  const view = doc.defaultView as (Window & { agentchartViewer?: ViewerApi }) | null;
  if (view) view.agentchartViewer = api;
  const embedded = doc.getElementById('trace-data');
  if (embedded && embedded.textContent && embedded.textContent.trim() !== '')
    load(embedded.textContent, embedded.dataset.name ?? 'embedded trace');
  return api;
}

function actorName(model: ViewerModel, sessionId: string | null): string {
  if (sessionId === null) return 'outside';
  const actor = model.actors.get(sessionId);
  return actor ? actor.label : sessionId;
}

const local = (id: string) => id.slice(id.indexOf('.') + 1);

export function describeStep(model: ViewerModel, step: ViewerStep): string {
  const actor = model.actors.get(step.sessionId);
  const name = actor ? actorTitle(model, actor) : actorName(model, step.sessionId);
  const who = actor?.machineId && actor.machineId !== name ? `${name} (${actor.machineId})` : name;
  if (step.kind === 'snapshot')
    return `${who} · ${describeValue(step.value)} · ${step.status} · after ${step.eventType}`;
  const moves = step.edges.map((edge) => `${local(edge.source)} → ${local(edge.target)}`).join(', ');
  return `${who} · ${moves || 'no state change'} · on ${step.eventType}`;
}

function renderEntries(doc: Document, list: HTMLElement, model: ViewerModel, entries: TraceEntry[]): void {
  const items = entries.slice(0, MAX_LISTED_ENTRIES).map((entry) => {
    const item = doc.createElement('li');
    item.className = `entry entry-${entry.kind}`;
    item.dataset.kind = entry.kind;
    item.textContent = `${formatMs(entry.t)} ${describeEntry(model, entry)}`;
    return item;
  });
  if (entries.length > MAX_LISTED_ENTRIES) {
    const more = doc.createElement('li');
    more.className = 'entry more';
    more.textContent = `… ${entries.length - MAX_LISTED_ENTRIES} more`;
    items.push(more);
  }
  list.replaceChildren(...items);
}

function describeEntry(model: ViewerModel, entry: TraceEntry): string {
  switch (entry.kind) {
    case 'machine':
      return `machine ${entry.machineId}`;
    case 'actor':
      return `actor created: ${entry.label}${entry.machineId ? ` (${entry.machineId})` : ''}`;
    case 'event':
      return `${actorName(model, entry.sessionId)} ← ${entry.event.type}${entry.sourceId ? ` from ${actorName(model, entry.sourceId)}` : ''}`;
    case 'action':
      return `${actorName(model, entry.sessionId)} · action ${entry.action}`;
    case 'transition':
      return `${actorName(model, entry.sessionId)} · ${entry.transitions.map((item) => `${local(item.source)} → ${item.targets.map(local).join(', ')}`).join('; ')}`;
    case 'snapshot':
      return `${actorName(model, entry.sessionId)} · ${describeValue(entry.value)} (${entry.status})`;
    case 'agent':
      return `event ${describeAgentEvent(entry.event)}`;
    case 'recorderError':
      return `recorder error: ${entry.message}`;
  }
}

function describeAgentEvent(event: Extract<TraceEntry, { kind: 'agent' }>['event']): string {
  switch (event.type) {
    case 'turnStart':
      return `turnStart · turn ${event.turnIndex}`;
    case 'turnEnd':
      return `turnEnd · ${event.reason}`;
    case 'messageEnd':
      return `messageEnd · ${event.message.stopReason}`;
    case 'toolExecutionStart':
    case 'toolApprovalRequested':
      return `${event.type} · ${event.toolName} ${event.toolCallId}`;
    case 'toolApprovalResolved':
      return `${event.type} · ${event.toolName} ${event.approved ? 'approved' : 'denied'}`;
    case 'toolExecutionUpdate':
      return `${event.type} · ${event.toolName} ${JSON.stringify(event.partial)}`;
    case 'toolExecutionEnd':
      return `${event.type} · ${event.toolName}${event.isError ? ' (error)' : ''}`;
    case 'agentEnd':
      return `agentEnd · ${event.status} · ${event.endReason}`;
    default:
      return event.type;
  }
}
