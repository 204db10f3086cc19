import { createChartPanels, highlightCharts } from '../../trace/viewer/charts.js';
import type { StepMachines } from '../../store/step-types.js';
import type { MachineOutlineNode } from '../../trace/format.js';
import type { ChartPanel } from '../../trace/viewer/charts.js';
import type { ActorState, ViewerActor, ViewerModel } from '../../trace/viewer/model.js';

/**
 * The three charts, lit from the machines' states (now, or as a step left them): the trace
 * viewer's panels, fed a model with one actor per running machine — the session's master, its
 * turn, and each tool call under its turn.
 */
export interface MachineCharts {
  panels: ChartPanel[];
  outlines: Map<string, MachineOutlineNode>;
}

export function createMachineCharts(
  container: HTMLElement,
  outlines: Record<string, MachineOutlineNode>,
  svgs: ReadonlyMap<string, string>,
): MachineCharts {
  const machines = new Map(Object.entries(outlines));
  const model = chartModel(machines, { master: null, turn: null, calls: [] }).model;
  return { panels: createChartPanels(document, container, model, svgs, true), outlines: machines };
}

export function chartModel(
  machines: Map<string, MachineOutlineNode>,
  states: StepMachines,
): { model: ViewerModel; states: Map<string, ActorState> } {
  const actors = new Map<string, ViewerActor>();
  const lit = new Map<string, ActorState>();
  const add = (actor: Omit<ViewerActor, 'actorId' | 'createdAt'>, state: ActorState | null) => {
    actors.set(actor.sessionId, { ...actor, actorId: actor.sessionId, createdAt: 0 });
    if (state) lit.set(actor.sessionId, state);
  };
  if (states.master !== null) {
    add(
      { sessionId: 'master', parentId: null, machineId: 'master', label: 'session' },
      { value: states.master, status: 'active', changedAt: 0 },
    );
  }
  const turnKey = states.turn ? `turn:${states.turn.turnIndex}` : null;
  if (states.turn && turnKey) {
    add(
      { sessionId: turnKey, parentId: 'master', machineId: 'turn', label: `turn ${states.turn.turnIndex}` },
      { value: states.turn.value, status: states.turn.status, changedAt: 1 },
    );
  }
  states.calls.forEach((call, index) =>
    add(
      {
        sessionId: `call:${call.id}`,
        parentId: turnKey ?? 'master',
        machineId: 'toolCall',
        label: `${call.name} · ${call.id}`,
      },
      { value: call.value, status: call.status, changedAt: 2 + index },
    ),
  );
  return {
    model: {
      header: { kind: 'header', format: 'agentchart-trace', version: 1, startedAt: '' },
      entries: [],
      machines,
      actors,
      steps: [],
    },
    states: lit,
  };
}

/** Lights the charts; the panel headings say which actor each shows. */
export function lightCharts(charts: MachineCharts, states: StepMachines): void {
  const { model, states: lit } = chartModel(charts.outlines, states);
  highlightCharts(charts.panels, model, lit, null, Number.MAX_SAFE_INTEGER);
  for (const panel of charts.panels) {
    const small = panel.element.querySelector('h2 small');
    if (!small) continue;
    const running = [...model.actors.values()].filter(
      (actor) => actor.machineId === panel.machineId && lit.get(actor.sessionId)?.status === 'active',
    );
    small.textContent =
      running.length === 0
        ? panel.machineId === 'master'
          ? 'no run in progress'
          : 'none running'
        : `${running.length} running`;
  }
}
