import type { ToolOutput } from '../tools/types.js';

type Block = { type?: unknown; [key: string]: unknown };

/**
 * A tools/call result as an agentchart result: the text of its content blocks, one per line. Blocks
 * that are not text are named in brackets (the model cannot see images through a string result);
 * with no content, structured content is given as JSON. `isError` keeps the server's own text.
 */
export function resultToOutput(result: Record<string, unknown>): ToolOutput {
  const isError = result.isError === true;
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  let text = blocks.map(blockText).join('\n');
  if (blocks.length === 0) {
    // A server on the 2024-10-07 protocol answers { toolResult } instead of content.
    const structured = result.structuredContent ?? result.toolResult;
    if (structured !== undefined) text = JSON.stringify(structured);
  }
  return { content: text, isError };
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${String(block.mimeType ?? 'unknown type')}, ${base64Bytes(block.data)} bytes]`;
    case 'resource_link':
      return `[resource link: ${String(block.uri)}${typeof block.name === 'string' ? ` (${block.name})` : ''}]`;
    case 'resource': {
      const resource = (block.resource ?? {}) as Block;
      if (typeof resource.text === 'string') return resource.text;
      return `[resource: ${String(resource.uri)}${typeof resource.mimeType === 'string' ? ` (${resource.mimeType})` : ''}]`;
    }
    default:
      return `[${String(block.type)} content]`;
  }
}

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
