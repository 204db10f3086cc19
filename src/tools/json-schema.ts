import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import { describeValue, jsonSchemaFacilityOf, standardPropsOf, zodTypeOf } from './schema.js';

/**
 * JSON Schemas of parameter schemas, computed once per schema object. Keyed weakly by the schema so
 * tools sharing a schema share the result and dropped tools free it.
 */
const cache = new WeakMap<object, Readonly<Record<string, unknown>>>();

const WHAT_WE_NEED =
  'a zod object schema (z.object({...})) or a Standard Schema of an object with a JSON Schema ' +
  '(~standard.jsonSchema: valibot via toStandardJsonSchema from @valibot/to-json-schema, arktype, ' +
  'jsonSchemaParameters(schema), …)';

/**
 * The JSON Schema a provider sees for a tool's parameters, for the *input* side (fields with
 * defaults are optional to the model; the schema fills them in). zod schemas go through
 * `z.toJSONSchema`, without its `$schema` key; any other Standard Schema gives its own JSON Schema
 * (`~standard.jsonSchema`), passed on unchanged. The result is deeply frozen because it is shared
 * by every registry and request. Throws `AgentError('InvalidOptions')` saying what it got and what
 * it needs when the schema cannot be used: not a schema, not of an object, or no JSON Schema form
 * (dates, bigints, …).
 */
export function parametersJsonSchema(toolName: string, parameters: unknown): Readonly<Record<string, unknown>> {
  const keyable = (typeof parameters === 'object' && parameters !== null) || typeof parameters === 'function';
  const cached = keyable ? cache.get(parameters) : undefined;
  if (cached) return cached;
  const invalid = (message: string) => new AgentError('InvalidOptions', `Tool "${toolName}": ${message}`);
  const zodType = zodTypeOf(parameters);
  if (zodType === undefined ? standardPropsOf(parameters) === undefined : zodType !== 'object') {
    throw invalid(`parameters must be ${WHAT_WE_NEED}, got ${describeValue(parameters)}.`);
  }
  const schemaObject = parameters as object;
  const convert =
    zodType !== undefined ? () => zodJsonSchema(parameters as z.ZodType) : jsonSchemaFacilityOf(schemaObject);
  if (convert === undefined) {
    throw invalid(
      `parameters is ${describeValue(parameters)} without a JSON Schema, which the model needs to see the tool; ` +
        `give ${WHAT_WE_NEED}.`,
    );
  }
  let converted: unknown;
  try {
    converted = convert();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalid(`parameters cannot be expressed as JSON Schema (${reason}). Use JSON-compatible schema types.`);
  }
  // Arguments are a JSON object: a schema of anything else (a string, an array) cannot describe them.
  const type = (converted as { type?: unknown } | null)?.type;
  if (
    typeof converted !== 'object' ||
    converted === null ||
    Array.isArray(converted) ||
    (type !== undefined && type !== 'object')
  ) {
    throw invalid(
      `parameters must describe an object (JSON Schema type "object"), got ${describeValue(parameters)} ` +
        `whose JSON Schema type is ${JSON.stringify(type) ?? 'missing'}.`,
    );
  }
  // A copy: the library may keep the object it returned, and it is frozen below.
  const frozen = deepFreeze(structuredClone(converted as Record<string, unknown>));
  cache.set(schemaObject, frozen);
  return frozen;
}

function zodJsonSchema(parameters: z.ZodType): Record<string, unknown> {
  const jsonSchema = z.toJSONSchema(parameters, { io: 'input' }) as Record<string, unknown>;
  delete jsonSchema.$schema;
  return jsonSchema;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
