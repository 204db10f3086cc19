import type { Counters } from '../../domain/counters.js';
import { h } from './dom.js';

/** The counters as a grid; a value that changed since the last drawing is marked for a moment. */
export function renderCounters(grid: HTMLElement, counters: Counters, previous: Counters | null): void {
  const cells: HTMLElement[] = [];
  for (const [name, value] of Object.entries(counters)) {
    if (name === 'failureCodes') continue;
    const changed = previous !== null && previous[name as keyof Counters] !== value;
    const shown = name === 'costUsd' ? `$${(value as number).toFixed(4)}` : String(value);
    cells.push(
      h(
        'div',
        { class: `counter${value === 0 ? ' zero' : ''}${changed ? ' changed' : ''}`, 'data-counter': name },
        h('span', { class: 'name' }, name),
        h('span', { class: 'value' }, shown),
      ),
    );
  }
  const codes = Object.entries(counters.failureCodes);
  cells.push(
    h(
      'div',
      { class: `counter failure-codes${codes.length === 0 ? ' zero' : ''}`, 'data-counter': 'failureCodes' },
      h('span', { class: 'name' }, 'failureCodes'),
      h('span', { class: 'value' }, codes.length === 0 ? '—' : codes.map(([code, n]) => `${code} ${n}`).join(', ')),
    ),
  );
  grid.replaceChildren(...cells);
}
