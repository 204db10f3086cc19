import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { parseTrace } from 'agentchart/trace';
import { recordTrace } from 'agentchart/inspect';
import { scriptedModel } from 'agentchart/testing';

describe('recordTrace (the Node file writer)', () => {
  it('appends each line to the file as it is recorded, and close() reports the entries', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'agentchart-trace-')), 'run.jsonl');
    const trace = recordTrace(path);
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), inspect: trace.inspect });
    agent.events.subscribe(trace.events);
    const seen: string[] = [];
    agent.events.subscribe((event) => seen.push(event.type));
    const result = await agent.prompt('hello').result;
    const { entries } = await trace.close();
    const parsed = parseTrace(await readFile(path, 'utf8'));
    expect(parsed.entries).toHaveLength(entries);
    const recorded = parsed.entries.flatMap((entry) => (entry.kind === 'agent' ? [entry.event.type] : []));
    expect(recorded).toEqual(seen);
    expect([recorded[0], recorded[1], recorded.at(-2), recorded.at(-1)]).toEqual([
      'agentStart',
      'turnStart',
      'turnEnd',
      'agentEnd',
    ]);
    expect(
      parsed.entries
        .filter((entry) => entry.kind === 'machine')
        .map((entry) => entry.kind === 'machine' && entry.machineId),
    ).toEqual(['master', 'turn']);
    expect(result.status).toBe('completed');
    // The file writer keeps nothing in memory; closing twice is the same close.
    expect(trace.lines()).toEqual([]);
    await expect(trace.close()).resolves.toEqual({ path, entries });
  });

  it('rejects close() with the reason when the file cannot be written', async () => {
    const trace = recordTrace(join(tmpdir(), 'no-such-directory-agentchart', 'run.jsonl'));
    await expect(trace.close()).rejects.toThrow(/^Could not write the trace to .*no-such-directory-agentchart.*ENOENT/);
  });
});
