import type { z } from 'zod';
import { AgentEventSchema, type Message, MessageSchema } from '../../domain/index.js';

/** runId, seq and turnIndex problems are reported by the seq checks, with their own wording. */
const REPORTED_ELSEWHERE = new Set<PropertyKey>(['runId', 'seq', 'turnIndex']);
const MAX_ISSUES = 3;

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  const more = issues.length > MAX_ISSUES ? ` (+${issues.length - MAX_ISSUES} more)` : '';
  return shown.join('; ') + more;
}

/** Validates one logged event against the contract schema. */
export function checkEventShape(event: unknown, where: string, out: string[]): void {
  const parsed = AgentEventSchema.safeParse(event);
  if (parsed.success) return;
  const issues = parsed.error.issues.filter((issue) => !(issue.path.length === 1 && REPORTED_ELSEWHERE.has(issue.path[0])));
  if (issues.length === 0) return;
  const type = typeof event === 'object' && event !== null && 'type' in event ? String(event.type) : 'event';
  out.push(`schema: ${type} at ${where} is malformed: ${describeIssues(issues)}`);
}

export function checkMessagesShape(messages: readonly Message[], label: string, out: string[]): void {
  messages.forEach((message, i) => {
    const parsed = MessageSchema.safeParse(message);
    if (!parsed.success) out.push(`schema: ${label} message ${i} is malformed: ${describeIssues(parsed.error.issues)}`);
  });
}
