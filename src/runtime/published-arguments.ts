import { jsonCopy } from '../domain/json-problem.js';
import { AGENT_EVENT_LIMITS, toJsonValue } from '../trace/serialize.js';

/**
 * A call's arguments as events and the store carry them: JSON, copied as they are when published (a
 * tool that changes its arguments object changes no event). The tool itself runs with what its schema
 * made of the model's JSON; a transform to a BigInt or a Date is published as a trace writes it
 * (`"10n"`, the ISO date), never a step the store cannot write.
 */
export function publishedArguments(args: Record<string, unknown>): Record<string, unknown> {
  const copied = jsonCopy(args, 'arguments');
  return ('value' in copied ? copied.value : toJsonValue(args, AGENT_EVENT_LIMITS)) as Record<string, unknown>;
}
