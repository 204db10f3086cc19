import { PEERS, type Contender, type Peer } from './drivers.js';
import type { Comparison, PeerFigures } from './throughput.js';

/** The results.md sections comparing agentchart with the other libraries (pi's agent core, the AI SDK). */

export interface PeersInfo {
  /** Package name and installed version of pi's agent core and of the AI SDK. */
  versions: { pi: string; aiSdk: string };
  /** Each contender rejected tool arguments that do not match the schema (bench/throughput.ts validationCheck). */
  validation: Record<Contender, boolean>;
}

/** What results.json keeps under `peers`: the info above and the one workload only the peer comparison runs. */
export interface PeersResults extends PeersInfo {
  /** A short session: T=1 × K=1, µs per session (the fixed cost of a run weighs most here). */
  shortSession: Comparison;
}

export interface PeerWorkloads {
  perTurn: Comparison;
  perTool: Comparison;
  batch: Record<string, Comparison>;
  shortSession: Comparison;
  /** One long session, µs per turn. */
  longSession?: { turns: number; perTurn: Comparison };
}

export const PEER_LABELS: Record<Peer, string> = { pi: 'pi', aiSdk: 'AI SDK', aiSdkGenerate: 'AI SDK generateText' };
const LABELS: Record<Contender, string> = { agentchart: 'agentchart', hand: 'hand loop', ...PEER_LABELS };

const fmt = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const times = (value: number) => `${fmt(value, 2)} ×`;

function workloads(w: PeerWorkloads): [string, Comparison][] {
  return [
    ['per turn, T=200 × K=1 (µs/turn)', w.perTurn],
    ['per tool call, T=50 × K=20 (µs/call)', w.perTool],
    ...Object.entries(w.batch).map(([k, c]): [string, Comparison] => [
      `batch K=${Number(k).toLocaleString('en-US')}, one turn (µs/call)`,
      c,
    ]),
    ['short session, T=1 × K=1 (µs/session)', w.shortSession],
    ...(w.longSession
      ? [
          [`${w.longSession.turns.toLocaleString('en-US')}-turn session (µs/turn)`, w.longSession.perTurn] as [
            string,
            Comparison,
          ],
        ]
      : []),
  ];
}

function wallRow(label: string, c: Comparison): string {
  const peers = PEERS.map((p) => c.peers[p]);
  return [
    label,
    fmt(c.agentchart.median),
    fmt(c.hand.median),
    ...peers.map((f) => fmt(f.wall.median)),
    ...peers.map((f) => `${times(f.ratio)} (${times(f.pairedRatio)})`),
    String(c.agentchart.samples.length),
  ].join(' | ');
}

function cpuRow(label: string, c: Comparison): string {
  const peers = PEERS.map((p) => c.peers[p]);
  return [
    label,
    fmt(c.cpu.agentchart.median),
    fmt(c.cpu.hand.median),
    ...peers.map((f) => fmt(f.cpu.median)),
    ...peers.map((f) => times(f.cpuRatio)),
  ].join(' | ');
}

export function renderPeerSections(w: PeerWorkloads, info: PeersInfo): string[] {
  const rows = workloads(w);
  const rejected = (Object.entries(info.validation) as [Contender, boolean][]).map(
    ([name, ok]) => `${LABELS[name]} ${ok ? 'yes' : '**NO**'}`,
  );
  const heads = PEERS.map((p) => PEER_LABELS[p]);
  const ratioHeads = heads.map((h) => `agentchart / ${h}`);
  const columns = (n: number) => `|${Array.from({ length: n }, () => '---').join('|')}|`;
  return [
    '## agentchart against pi and the AI SDK',
    '',
    `Same process, same workload, interleaved rounds: ${info.versions.pi} (\`Agent\`, a \`streamFn\``,
    `replaying the script) and ${info.versions.aiSdk} (\`streamText\` with \`stopWhen\`, and \`generateText\``,
    'without streaming, on a LanguageModelV4 replaying the script) beside agentchart and the hand loop;',
    'bench/README.md says what each adapter does. Every run is checked to',
    "have done the work (turns and executed tool calls, read back from each library's own result). Each rejects tool",
    `arguments its schema refuses (\`i\` a string): ${rejected.join(', ')}.`,
    'Ratios are agentchart / peer (below 1: agentchart is faster); "paired" is the median of the per-round ratios.',
    'On a loaded machine the wall clock inflates long runs more than short ones, so between implementations of',
    'very different speed the CPU ratio is the fairer one (bench/README.md).',
    '',
    '### Wall clock (medians; ratio, paired ratio in brackets)',
    '',
    `| benchmark | agentchart | hand loop | ${heads.join(' | ')} | ${ratioHeads.join(' | ')} | runs |`,
    columns(4 + 2 * PEERS.length),
    ...rows.map(([label, c]) => `| ${wallRow(label, c)} |`),
    '',
    '### Process CPU time (medians)',
    '',
    `| benchmark | agentchart | hand loop | ${heads.join(' | ')} | ${ratioHeads.join(' | ')} |`,
    columns(3 + 2 * PEERS.length),
    ...rows.map(([label, c]) => `| ${cpuRow(label, c)} |`),
    '',
  ];
}
