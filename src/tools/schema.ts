/**
 * A tool's parameter schema as agentchart sees it: any Standard Schema (the `~standard` interface that
 * zod 4, valibot, arktype and others implement) whose output is an object. Typed structurally, never
 * against our copy of zod's classes, so the user's own zod 4.x (or `zod/v4`, `zod/mini`) typechecks.
 */
export interface ToolParameters<Output extends Record<string, unknown> = Record<string, unknown>> {
  /** The Standard Schema interface (zod 4, valibot with `toStandardJsonSchema`, arktype implement it). */
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => unknown;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

/** The arguments `execute` receives: the schema's output type (any JSON object if it declares none). */
export type ToolArguments<Params extends ToolParameters> =
  NonNullable<Params['~standard']['types']> extends { readonly output: infer Output }
    ? Output
    : Record<string, unknown>;

/** The Standard JSON Schema converter (`~standard.jsonSchema`), when the schema has one. */
interface JsonSchemaConverter {
  input(options: { target: string }): Record<string, unknown>;
}

/** The part of a zod 4 schema agentchart reads: its definition's type (`object`, `string`, `pipe`, …). */
export function zodTypeOf(value: unknown): string | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const type = (value as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type;
  return typeof type === 'string' ? type : undefined;
}

/** The `~standard` properties when `value` implements Standard Schema v1 (a validate function). */
export function standardPropsOf(value: unknown): { vendor: string; validate: (value: unknown) => unknown } | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const props = (value as { '~standard'?: { version?: unknown; vendor?: unknown; validate?: unknown } })['~standard'];
  if (typeof props !== 'object' || props === null || props.version !== 1 || typeof props.validate !== 'function')
    return undefined;
  const validate = props.validate as (value: unknown) => unknown;
  return {
    vendor: typeof props.vendor === 'string' ? props.vendor : 'unknown',
    validate: (input) => validate.call(props, input),
  };
}

/**
 * The schema's own JSON Schema facility for its input side: the Standard JSON Schema interface
 * (`~standard.jsonSchema.input`, zod ≥ 4.2, arktype, valibot's `toStandardJsonSchema`), else a
 * `toJsonSchema()` method (older arktype). Undefined when it has neither.
 */
export function jsonSchemaFacilityOf(value: object): (() => unknown) | undefined {
  const converter = (value as { '~standard'?: { jsonSchema?: Partial<JsonSchemaConverter> } })['~standard']?.jsonSchema;
  if (typeof converter?.input === 'function') {
    const input = converter.input;
    return () => input.call(converter, { target: 'draft-2020-12' });
  }
  const method = (value as { toJsonSchema?: unknown }).toJsonSchema;
  if (typeof method === 'function') return () => (method as () => unknown).call(value);
  return undefined;
}

/** `a zod string schema`, `a valibot schema`, `the string "x"`, `number 5`, … for messages. */
export function describeValue(value: unknown): string {
  const zodType = zodTypeOf(value);
  if (zodType !== undefined) return `a zod ${zodType} schema`;
  const standard = standardPropsOf(value);
  if (standard !== undefined) return `a ${standard.vendor} schema`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'function') return 'a function';
  return typeof value === 'undefined' ? 'undefined' : `${typeof value} ${String(value)}`;
}
