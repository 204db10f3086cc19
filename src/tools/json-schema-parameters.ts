/**
 * Tool parameters described by a JSON Schema instead of zod — an MCP server's `inputSchema`, for
 * one. They take the shape of a Standard Schema with a JSON Schema converter (`~standard.validate`
 * and `~standard.jsonSchema`, the Standard Schema / Standard JSON Schema interfaces), so any
 * library speaking those interfaces can be used as tool parameters the same way.
 */

/** A validation issue in Standard Schema form. */
export interface StandardIssue {
  /** What is wrong. */
  readonly message: string;
  /** Where: the keys from the arguments' root. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
}

export type StandardResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly StandardIssue[] };

/** A Standard Schema (v1) that can also state its JSON Schema (Standard JSON Schema v1). */
export interface StandardJsonSchemaParameters<Output = Record<string, unknown>> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly jsonSchema: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
      readonly output: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** Checks arguments against a JSON Schema: the problems found, or none. */
export type JsonSchemaCheck = (args: Record<string, unknown>) => readonly StandardIssue[];

/**
 * Parameters whose JSON Schema is `schema`, passed to the model unchanged. `check` validates the
 * arguments (e.g. with the schema's own validator); without it any JSON object is accepted and
 * validation is left to whoever runs the tool.
 */
export function jsonSchemaParameters(
  schema: Record<string, unknown>,
  check?: JsonSchemaCheck,
): StandardJsonSchemaParameters {
  // A copy, so the caller's object can change without changing the tool; the registry freezes it.
  const copy = structuredClone(schema);
  const asJsonSchema = () => copy;
  return Object.freeze({
    '~standard': Object.freeze({
      version: 1 as const,
      vendor: 'agentchart/json-schema',
      validate(value: unknown): StandardResult<Record<string, unknown>> {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          return { issues: [{ message: 'expected a JSON object' }] };
        }
        const args = value as Record<string, unknown>;
        const issues = check ? check(args) : [];
        return issues.length > 0 ? { issues } : { value: args };
      },
      jsonSchema: Object.freeze({ input: asJsonSchema, output: asJsonSchema }),
    }),
  });
}
