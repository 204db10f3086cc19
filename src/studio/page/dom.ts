/**
 * Small DOM helpers of the studio page. The page's script is these sources joined into one
 * classic script with the trace viewer's (charts, timeline): top-level names are shared.
 */

type Child = Node | string | null | undefined | false;

/** `h('div', { class: 'x', 'data-id': '1' }, child, …)`; attributes that are null or false are left out. */
export function h(
  tag: string,
  attributes: Record<string, string | number | boolean | null | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`studio page: #${id} is missing`);
  return element as T;
}

/** JSON for a person: two-space indents, long values cut. */
export function pretty(value: unknown, max = 4_000): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `12:03:04.123` (local time). */
export function clockTime(t: number): string {
  const date = new Date(t);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
