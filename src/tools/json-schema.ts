import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import { isStandardJsonSchema, type StandardJsonSchemaParameters } from './json-schema-parameters.js';

/**
 * JSON Schemas of parameter schemas, computed once per schema object. Keyed weakly by the zod
 * schema so tools sharing a schema share the result and dropped tools free it.
 */
const cache = new WeakMap<object, Readonly<Record<string, unknown>>>();

/**
 * The JSON Schema a provider sees for a tool's parameters: the *input* side of the zod schema
 * (fields with defaults are optional to the model; zod fills them in), without the `$schema` key.
 * The result is deeply frozen because it is shared by every registry and request.
 * Throws `AgentError('InvalidOptions')` when the schema has no JSON Schema form (dates, bigints, ...).
 */
export function parametersJsonSchema(
  toolName: string,
  parameters: z.ZodType | StandardJsonSchemaParameters,
): Readonly<Record<string, unknown>> {
  const cached = cache.get(parameters);
  if (cached) return cached;
  // Not zod: the schema states its own JSON Schema, which is passed on unchanged.
  if (!('_zod' in parameters) && isStandardJsonSchema(parameters)) {
    const frozen = deepFreeze(parameters['~standard'].jsonSchema.input({ target: 'draft-2020-12' }));
    cache.set(parameters, frozen);
    return frozen;
  }
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(parameters, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AgentError(
      'InvalidOptions',
      `Tool "${toolName}": parameters cannot be expressed as JSON Schema (${reason}). Use JSON-compatible zod types.`,
    );
  }
  delete jsonSchema.$schema;
  const frozen = deepFreeze(jsonSchema);
  cache.set(parameters, frozen);
  return frozen;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
