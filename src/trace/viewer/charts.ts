import type { MachineOutlineNode } from '../format.js';
import {
  activeStateIds,
  actorTitle,
  describeValue,
  type ActorState,
  type ViewerActor,
  type ViewerModel,
  type ViewerStep,
} from './model.js';
import { fitLabels, frame, viewBoxOf, type DiagramView } from './svg.js';

/**
 * One panel per machine of the trace: its generated diagram (an embedded Graphviz SVG) or, for a
 * machine without one, its state tree drawn from the recorded outline. Highlighting only toggles
 * classes on elements tagged with `data-state-id`, so both drawings behave the same.
 */

export interface ChartPanel {
  machineId: string;
  root: MachineOutlineNode;
  element: HTMLElement;
  chips: HTMLElement;
  states: Map<string, Element[]>;
  /** Diagram edges by `source->target` (Graphviz titles); empty for drawn trees. */
  edges: Map<string, Element[]>;
  compound: Set<string>;
  /** The diagram's view (a drawn tree has none): it follows the active state unless switched to the whole chart. */
  view: DiagramView | null;
}

const MAX_CHIPS = 12;

export function createChartPanels(
  doc: Document,
  container: HTMLElement,
  model: ViewerModel,
  svgs: ReadonlyMap<string, string>,
  /** Fit the labels after the first frame (measuring every label holds a page's first drawing back). */
  fitLabelsLater = false,
): ChartPanel[] {
  container.replaceChildren();
  const panels: ChartPanel[] = [];
  for (const [machineId, root] of model.machines) {
    const element = doc.createElement('section');
    element.className = 'chart-panel';
    element.dataset.machine = machineId;
    const heading = doc.createElement('h2');
    const count = [...model.actors.values()].filter((actor) => actor.machineId === machineId).length;
    heading.textContent = `${machineId} `;
    const small = doc.createElement('small');
    small.textContent = `${count} actor${count === 1 ? '' : 's'}`;
    heading.append(small);
    const chips = doc.createElement('div');
    chips.className = 'chips';
    const drawing = doc.createElement('div');
    drawing.className = 'drawing';
    element.append(heading, chips, drawing);
    container.append(element);

    const panel: ChartPanel = {
      machineId,
      root,
      element,
      chips,
      states: new Map(),
      edges: new Map(),
      compound: compoundIds(root),
      view: null,
    };
    const svg = svgs.get(machineId);
    if (svg) {
      attachSvg(drawing, svg, panel, fitLabelsLater);
      if (panel.view) heading.append(followToggle(doc, panel.view));
    } else drawTree(doc, drawing, root, panel, true);
    panels.push(panel);
  }
  return panels;
}

function compoundIds(root: MachineOutlineNode): Set<string> {
  const ids = new Set<string>();
  const visit = (node: MachineOutlineNode) => {
    if (node.states.length > 0) ids.add(node.id);
    node.states.forEach(visit);
  };
  visit(root);
  return ids;
}

const addTo = (map: Map<string, Element[]>, key: string, element: Element) =>
  map.set(key, [...(map.get(key) ?? []), element]);

function attachSvg(drawing: HTMLElement, svgText: string, panel: ChartPanel, fitLater: boolean): void {
  drawing.classList.add('svg');
  drawing.innerHTML = svgText;
  const svg = drawing.querySelector('svg');
  if (!svg) return;
  // Scale to the panel (the viewBox keeps the proportions); a click shows it at its natural size.
  svg.style.setProperty('--natural-width', svg.getAttribute('width') ?? '100%');
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  drawing.addEventListener('click', () => drawing.classList.toggle('zoomed'));
  drawing.title = 'Click to zoom';
  const element = svg as unknown as SVGSVGElement;
  panel.view = { svg: element, whole: viewBoxOf(element), follow: true };
  if (fitLater) requestAnimationFrame(() => setTimeout(() => fitLabels(element), 0));
  else fitLabels(element);
  for (const group of Array.from(svg.querySelectorAll('g.node, g.cluster, g.edge'))) {
    const title = group.querySelector('title')?.textContent ?? '';
    if (group.classList.contains('edge')) addTo(panel.edges, title, group);
    else {
      const id = group.classList.contains('cluster') ? title.replace(/^cluster_/, '') : title;
      group.setAttribute('data-state-id', id);
      addTo(panel.states, id, group);
    }
  }
}

/** The switch between following the active state and showing the whole chart. */
function followToggle(doc: Document, view: DiagramView): HTMLElement {
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = 'follow';
  const label = () => (button.textContent = view.follow ? 'whole chart' : 'follow the active state');
  label();
  button.addEventListener('click', (event) => {
    event.stopPropagation();
    view.follow = !view.follow;
    label();
    frame(view, view.follow ? Array.from(view.svg.querySelectorAll('g.node.active, g.node.from, g.edge.taken')) : []);
  });
  return button;
}

function drawTree(
  doc: Document,
  parent: HTMLElement,
  node: MachineOutlineNode,
  panel: ChartPanel,
  isRoot: boolean,
): void {
  const box = doc.createElement('div');
  box.className = `state state-${node.type}`;
  if (!isRoot) {
    box.setAttribute('data-state-id', node.id);
    addTo(panel.states, node.id, box);
  }
  const name = doc.createElement('span');
  name.className = 'state-name';
  name.textContent = node.key;
  box.append(name);
  if (node.states.length > 0) {
    const children = doc.createElement('div');
    children.className = 'state-children';
    for (const child of node.states) drawTree(doc, children, child, panel, false);
    box.append(children);
  }
  parent.append(box);
}

/** The instances a panel shows: those still active, else the one that changed last. */
export function shownInstances(actors: ViewerActor[], states: ReadonlyMap<string, ActorState>): ViewerActor[] {
  const withState = actors.filter((actor) => states.has(actor.sessionId));
  const active = withState.filter((actor) => states.get(actor.sessionId)?.status === 'active');
  if (active.length > 0) return active;
  const latest = withState.reduce<ViewerActor | null>((best, actor) => {
    const changed = states.get(actor.sessionId)?.changedAt ?? -1;
    return best === null || changed >= (states.get(best.sessionId)?.changedAt ?? -1) ? actor : best;
  }, null);
  return latest ? [latest] : [];
}

export function highlightCharts(
  panels: ChartPanel[],
  model: ViewerModel,
  states: ReadonlyMap<string, ActorState>,
  step: ViewerStep | null,
  cursor: number,
): void {
  const stepActor = step ? model.actors.get(step.sessionId) : undefined;
  for (const panel of panels) {
    for (const elements of [...panel.states.values(), ...panel.edges.values()]) {
      for (const element of elements) element.classList.remove('active', 'from', 'taken');
    }
    const instances = [...model.actors.values()].filter(
      (actor) => actor.machineId === panel.machineId && actor.createdAt <= cursor,
    );
    const shown = shownInstances(instances, states);
    const active = new Set<string>();
    for (const actor of shown) {
      const state = states.get(actor.sessionId);
      if (state) for (const id of activeStateIds(panel.root, state.value)) active.add(id);
    }
    for (const id of active) for (const element of panel.states.get(id) ?? []) element.classList.add('active');
    // The view follows the innermost active states (a compound state's box is its whole region).
    const followed = [...active].filter((id) => !panel.compound.has(id)).flatMap((id) => panel.states.get(id) ?? []);

    const isCurrent = stepActor?.machineId === panel.machineId;
    panel.element.classList.toggle('current', isCurrent);
    if (isCurrent && step) {
      for (const edge of step.edges) {
        if (!active.has(edge.source)) {
          for (const element of panel.states.get(edge.source) ?? []) {
            element.classList.add('from');
            if (!panel.compound.has(edge.source)) followed.push(element);
          }
        }
        const from = panel.compound.has(edge.source) ? `${edge.source}.__initial` : edge.source;
        const to = panel.compound.has(edge.target) ? `${edge.target}.__initial` : edge.target;
        for (const element of panel.edges.get(`${from}->${to}`) ?? []) element.classList.add('taken');
      }
    }
    if (panel.view) frame(panel.view, followed);
    renderChips(panel, model, instances, shown, states, step?.sessionId ?? null);
  }
}

function renderChips(
  panel: ChartPanel,
  model: ViewerModel,
  instances: ViewerActor[],
  shown: ViewerActor[],
  states: ReadonlyMap<string, ActorState>,
  stepSession: string | null,
): void {
  const doc = panel.chips.ownerDocument;
  const recent = instances
    .filter((actor) => !shown.includes(actor) && states.has(actor.sessionId))
    .sort((a, b) => (states.get(b.sessionId)?.changedAt ?? 0) - (states.get(a.sessionId)?.changedAt ?? 0));
  const listed = [...shown, ...recent].slice(0, MAX_CHIPS);
  const chipOf = (actor: ViewerActor, className: string, name: string) => {
    const state = states.get(actor.sessionId);
    const chip = doc.createElement('span');
    chip.className = `chip ${className} ${state?.status ?? 'active'}${actor.sessionId === stepSession ? ' stepped' : ''}`;
    chip.dataset.sessionId = actor.sessionId;
    chip.textContent = `${name}: ${state ? describeValue(state.value) : '…'}${state && state.status !== 'active' ? ` (${state.status})` : ''}`;
    return chip;
  };
  const chips = listed.flatMap((actor) => {
    const chip = chipOf(actor, shown.includes(actor) ? 'shown' : 'recent', actorTitle(model, actor));
    // The machine actors this one runs now (a turn's tool calls), drawn under it.
    const children = [...model.actors.values()].filter(
      (child) =>
        child.parentId === actor.sessionId &&
        child.machineId !== null &&
        states.get(child.sessionId)?.status === 'active',
    );
    return shown.includes(actor)
      ? [chip, ...children.map((child) => chipOf(child, 'child', `↳ ${child.label}`))]
      : [chip];
  });
  const hidden = instances.length - listed.length;
  if (hidden > 0) {
    const more = doc.createElement('span');
    more.className = 'chip more';
    more.textContent = `+${hidden} more`;
    chips.push(more);
  }
  panel.chips.replaceChildren(...chips);
}
