import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, forkSession, memoryStore, type SessionStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { applyJsonPatch, diffJson, jsonEqual, type JsonValue } from '../../src/store/json-patch.js';

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'agentchart-fork-')), 'sessions.db');

describe('step record patches', () => {
  const json: fc.Arbitrary<JsonValue> = fc.jsonValue() as fc.Arbitrary<JsonValue>;
  it('applying the diff of two values gives the second, whatever they are', () => {
    fc.assert(
      fc.property(json, json, (before, after) => {
        const patch = diffJson(before, after);
        const wire = patch === undefined ? undefined : JSON.parse(JSON.stringify(patch));
        expect(jsonEqual(applyJsonPatch(before, wire), after)).toBe(true);
        if (jsonEqual(before, after)) expect(patch).toBeUndefined();
      }),
      {
        numRuns: 2_000,
        // Keys of Object.prototype are keys like any other (tool arguments are user data): found by this property.
        examples: [
          [{ valueOf: null }, {}],
          [{ valueOf: [] }, {}],
          [JSON.parse('{"__proto__":""}') as JsonValue, {}],
          [{}, JSON.parse('{"__proto__":0}') as JsonValue],
          [{ constructor: 1 }, { constructor: 2, toString: 'x' }],
        ],
      },
    );
  });

  it('is small when little changed: a counter, one more result', () => {
    const before = { counters: { turns: 1, modelCalls: 2 }, results: [{ id: 'a', content: 'x'.repeat(500) }] };
    const after = {
      counters: { turns: 2, modelCalls: 2 },
      results: [...before.results, { id: 'b', content: 'y' }],
    };
    expect(diffJson(before, after)).toEqual({
      counters: { turns: ['=', 2] },
      results: ['+', 1, [{ id: 'b', content: 'y' }]],
    });
  });
});

const readFile = defineTool({
  name: 'read_file',
  description: 'reads a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `contents of ${path}`,
});

/** Two runs: a tool call then an answer, then a second question answered directly. */
async function twoRuns(store: SessionStore, sessionId: string) {
  const agent = createAgent({
    model: scriptedModel([
      { text: 'Reading.', toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.txt' } }] },
      { text: 'a.txt says hello.' },
      { text: 'Second answer.' },
    ]),
    tools: [readFile],
    store,
    sessionId,
  });
  await agent.ready;
  const first = await agent.prompt('what is in a.txt?').result;
  const second = await agent.prompt('and again?').result;
  await agent.close();
  return { first, second };
}

describe.each([
  ['memoryStore', () => memoryStore()],
  ['sqliteStore', () => sqliteStore(tempFile())],
])('forkSession on %s with real agents', (_name, open) => {
  it('a fork at the end of the first run loads, runs with another prompt and model; the original is byte-identical', async () => {
    const store = open();
    await twoRuns(store, 'original');
    const events = await store.loadEvents('original');
    const original = JSON.stringify(events);
    const firstRun = events[0]?.runId as string;
    const end = events.find((event) => event.runId === firstRun && event.type === 'agentEnd');
    const fork = await forkSession(store, { from: 'original', to: 'fork', atSeq: end?.seq, runId: firstRun });
    expect(fork).toMatchObject({ sessionId: 'fork', events: events.indexOf(end!) + 1, historyLength: 4 });

    const model = scriptedModel([{ text: 'A different answer.' }], { name: 'other-model' });
    const agent = createAgent({ model, tools: [readFile], store, sessionId: 'fork' });
    expect(await agent.ready).toEqual({ resumedRun: null });
    expect(agent.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    const result = await agent.prompt('something else entirely').result;
    expect(result.status).toBe('completed');
    expect(model.requests[0]?.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
      'user',
    ]);
    expect(result.counters).toMatchObject({ turns: 3, modelCalls: 3, toolCallsExecuted: 1 });
    await agent.close();

    const forkEvents = await store.loadEvents('fork');
    expect(checkInvariants(forkEvents, result.messages).violations).toEqual([]);
    expect(JSON.stringify(forkEvents.slice(0, fork.events))).toBe(JSON.stringify(events.slice(0, fork.events)));
    expect(JSON.stringify(await store.loadEvents('original'))).toBe(original);
    expect((await store.load('original'))?.history.at(-1)).toMatchObject({
      content: [{ type: 'text', text: 'Second answer.' }],
    });
  });

  it('a fork in the middle of a run resumes that run when loaded, on the new model', async () => {
    const store = open();
    await twoRuns(store, 'original');
    const events = await store.loadEvents('original');
    // Right after the tool's result: the next model call has not happened yet.
    const toolEnd = events.find((event) => event.type === 'toolExecutionEnd');
    const fork = await forkSession(store, {
      from: 'original',
      to: 'mid',
      atSeq: toolEnd?.seq,
      runId: toolEnd?.runId,
    });
    expect((await store.load('mid'))?.run).not.toBeNull();
    const model = scriptedModel([{ text: 'Replayed with another model.' }], { name: 'other-model' });
    const agent = createAgent({ model, tools: [readFile], store, sessionId: 'mid' });
    const { resumedRun } = await agent.ready;
    const result = await resumedRun!.result;
    expect(result.status).toBe('completed');
    expect(result.messages.at(-1)).toMatchObject({ content: [{ type: 'text', text: 'Replayed with another model.' }] });
    // The fork's log, its prefix and the resumed rest, is one valid log.
    const log = await store.loadEvents('mid');
    expect(log.length).toBeGreaterThan(fork.events);
    expect(checkInvariants(log, result.messages).violations).toEqual([]);
    await agent.close();
  });
});

describe('a SQLite file written before step records existed', () => {
  it('opens as it is: the latest step is recoverable, earlier ones are refused clearly, new steps are recorded', async () => {
    const path = tempFile();
    await twoRuns(sqliteStore(path), 'old');
    // What an older agentchart left: no step-record tables.
    const db = new DatabaseSync(path);
    db.exec('DROP TABLE steps; DROP TABLE replaced_messages;');
    db.close();

    const store = sqliteStore(path);
    const loaded = await store.load('old');
    const steps = await store.steps('old');
    expect(steps).toEqual([
      expect.objectContaining({ version: loaded?.version, historyLength: 6, events: expect.any(Number) }),
    ]);
    expect((await store.loadStep('old', loaded!.version))?.checkpoint).toEqual(loaded);
    expect(await store.loadStep('old', 1)).toBeNull();
    const events = await store.loadEvents('old');
    await expect(forkSession(store, { from: 'old', to: 'early', atSeq: 1, runId: events[0]?.runId })).rejects.toThrow(
      /no recoverable step at or before event 1 .*stored by an older agentchart/,
    );
    const copy = await forkSession(store, { from: 'old', to: 'copy' });
    expect((await store.load('copy'))?.history).toEqual(loaded?.history);
    expect(copy.version).toBe(loaded?.version);

    // The session goes on: its new steps have records, and the step it had reached stays recoverable.
    const agent = createAgent({ model: scriptedModel([{ text: 'Third.' }]), store, sessionId: 'old' });
    await agent.ready;
    await agent.prompt('a third question').result;
    await agent.close();
    const after = await store.steps('old');
    expect(after[0]?.version).toBe(loaded?.version);
    expect(after.length).toBeGreaterThan(1);
    for (const step of after) expect(await store.loadStep('old', step.version)).not.toBeNull();
    store.close();
  });
});
