import { assertValidTool } from '../tools/define.js';
import { createToolRegistry, type ToolRegistry } from '../tools/registry.js';
import { toolSourceOf, type ToolSource } from '../tools/tool-source.js';
import type { AnyTool } from '../tools/types.js';

export interface ToolListChange {
  registry: ToolRegistry;
  added: string[];
  removed: string[];
  updated: string[];
}

/**
 * Follows the tool sources (e.g. MCP toolsets) behind an agent's tools. The agent's list is its
 * tools as given, each source's tools replaced by the source's current list at the place of its
 * first tool. A name already taken keeps its first owner (in list order); a malformed tool from a
 * source is left out rather than failing the turn.
 */
export class ToolSourceFollower {
  private readonly seen = new Map<ToolSource, number>();

  constructor(private readonly given: readonly AnyTool[]) {
    for (const tool of given) {
      const source = toolSourceOf(tool);
      if (source && !this.seen.has(source)) this.seen.set(source, source.version);
    }
  }

  /** The next registry when a source changed since the last call, or null (nothing to follow, or no change). */
  next(registry: ToolRegistry): ToolListChange | null {
    if (this.seen.size === 0) return null;
    let changed = false;
    for (const [source, version] of this.seen) {
      if (source.version !== version) changed = true;
      this.seen.set(source, source.version);
    }
    if (!changed) return null;
    const next = createToolRegistry(this.compose());
    const added = next.names.filter((name) => !registry.has(name));
    const removed = registry.names.filter((name) => !next.has(name));
    const updated = next.names.filter((name) => registry.has(name) && registry.get(name) !== next.get(name));
    if (added.length + removed.length + updated.length === 0) return null;
    return { registry: next, added, removed, updated };
  }

  private compose(): AnyTool[] {
    const tools: AnyTool[] = [];
    const names = new Set<string>();
    const placed = new Set<ToolSource>();
    const take = (tool: AnyTool) => {
      if (names.has(tool.name) || !isValid(tool)) return;
      names.add(tool.name);
      tools.push(tool);
    };
    for (const tool of this.given) {
      const source = toolSourceOf(tool);
      if (!source) take(tool);
      else if (!placed.has(source)) {
        placed.add(source);
        source.tools.forEach(take);
      }
    }
    return tools;
  }
}

function isValid(tool: AnyTool): boolean {
  try {
    assertValidTool(tool);
    return true;
  } catch {
    return false;
  }
}
