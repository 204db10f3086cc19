/**
 * The approval id a client quotes back (`addToolApprovalResponse({ id })`): it carries what the
 * server needs to answer the request the user saw — the session version `resolveApproval` checks,
 * and the position of the request in the run's events (a handle that takes the run over streams
 * only what follows it).
 */
export interface ApprovalRef {
  toolCallId: string;
  version: number;
  seq: number;
}

const PATTERN = /^approval-(\d+)-(\d+)-(.+)$/s;

export function approvalIdOf(ref: ApprovalRef): string {
  return `approval-${ref.version}-${ref.seq}-${ref.toolCallId}`;
}

/** The request an approval id names; null for an id agentchart did not write. */
export function parseApprovalId(id: string): ApprovalRef | null {
  const match = PATTERN.exec(id);
  if (!match) return null;
  const [, version, seq, toolCallId] = match as unknown as [string, string, string, string];
  return { toolCallId, version: Number(version), seq: Number(seq) };
}
