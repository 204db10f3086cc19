/**
 * The generated diagrams inside the viewer: the state and edge elements the highlighting toggles,
 * labels fitted to their boxes, and the view that follows the active state.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A diagram on the page: its element, its whole extent, and whether its view follows the active state. */
export interface DiagramView {
  svg: SVGSVGElement;
  whole: Box;
  follow: boolean;
}

/** Space kept around the followed states, and the smallest region shown (so their surroundings stay visible), in diagram units. */
const MARGIN = 36;
const MIN_WIDTH = 640;
const MIN_HEIGHT = 360;

/**
 * Graphviz sized every box for its own estimate of the font's widths; the fonts a machine really
 * has (DejaVu on a default Debian) can be wider. A label wider than its box is narrowed to fit.
 */
export function fitLabels(svg: SVGSVGElement): number {
  let fitted = 0;
  for (const group of Array.from(svg.querySelectorAll('g.node, g.cluster'))) {
    const shape = group.querySelector('path, polygon, ellipse') as SVGGraphicsElement | null;
    if (!shape) continue;
    const room = shape.getBBox().width - 8;
    for (const text of Array.from(group.querySelectorAll('text'))) {
      const width = text.getComputedTextLength();
      if (width <= room || room <= 0) continue;
      text.setAttribute('textLength', String(Math.floor(room)));
      text.setAttribute('lengthAdjust', 'spacingAndGlyphs');
      fitted += 1;
    }
  }
  return fitted;
}

export function viewBoxOf(svg: SVGSVGElement): Box {
  const [x = 0, y = 0, width = 0, height = 0] = (svg.getAttribute('viewBox') ?? '').split(/[\s,]+/).map(Number);
  return { x, y, width, height };
}

const setViewBox = (svg: SVGSVGElement, box: Box) =>
  svg.setAttribute('viewBox', [box.x, box.y, box.width, box.height].map((n) => n.toFixed(2)).join(' '));

/**
 * Frames the given elements (the active states, the state just left): their extent in the
 * diagram's units plus a margin, at least a fixed share of the whole chart, never beyond it.
 * With nothing to follow, or following off, the whole chart is shown.
 */
export function frame(view: DiagramView, elements: readonly Element[]): Box {
  const { svg, whole } = view;
  if (!view.follow || elements.length === 0) {
    setViewBox(svg, whole);
    return whole;
  }
  const current = viewBoxOf(svg);
  const screen = svg.getBoundingClientRect();
  if (screen.width === 0 || screen.height === 0) return current;
  // Client rectangles mapped back to the diagram's units through the view box shown now.
  const scale = Math.max(current.width / screen.width, current.height / screen.height);
  const offsetX = (screen.width * scale - current.width) / 2;
  const offsetY = (screen.height * scale - current.height) / 2;
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  for (const element of elements) {
    const rect = element.getBoundingClientRect();
    left = Math.min(left, current.x + (rect.left - screen.left) * scale - offsetX);
    top = Math.min(top, current.y + (rect.top - screen.top) * scale - offsetY);
    right = Math.max(right, current.x + (rect.right - screen.left) * scale - offsetX);
    bottom = Math.max(bottom, current.y + (rect.bottom - screen.top) * scale - offsetY);
  }
  const width = Math.min(whole.width, Math.max(right - left + 2 * MARGIN, MIN_WIDTH));
  const height = Math.min(whole.height, Math.max(bottom - top + 2 * MARGIN, MIN_HEIGHT));
  const centreX = (left + right) / 2;
  const centreY = (top + bottom) / 2;
  const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);
  const box = {
    x: clamp(centreX - width / 2, whole.x, whole.x + whole.width - width),
    y: clamp(centreY - height / 2, whole.y, whole.y + whole.height - height),
    width,
    height,
  };
  setViewBox(svg, box);
  return box;
}
