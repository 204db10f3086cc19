import type { Model } from '../index.js';

/** Which model drives the demo: the offline script, or a real provider named by the environment. */
export type ProviderChoice =
  | { kind: 'scripted'; reason: string }
  | { kind: 'openai'; model: string; apiKey?: string; baseURL?: string }
  | { kind: 'anthropic'; model: string; apiKey: string; baseURL?: string };

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-4-5';

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/**
 * OpenAI-compatible when `OPENAI_BASE_URL` or `OPENAI_API_KEY` is set (a local server needs no key),
 * else Anthropic when `ANTHROPIC_API_KEY` is set, else the offline script. `--offline` forces the script.
 */
export function chooseProvider(env: Env, argv: readonly string[] = []): ProviderChoice {
  if (argv.includes('--offline')) return { kind: 'scripted', reason: '--offline' };
  if (set(env.OPENAI_BASE_URL) || set(env.OPENAI_API_KEY)) {
    return {
      kind: 'openai',
      model: set(env.OPENAI_MODEL) ? env.OPENAI_MODEL : DEFAULT_OPENAI_MODEL,
      // OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) need no key.
      ...(set(env.OPENAI_API_KEY) ? { apiKey: env.OPENAI_API_KEY } : {}),
      ...(set(env.OPENAI_BASE_URL) ? { baseURL: env.OPENAI_BASE_URL } : {}),
    };
  }
  if (set(env.ANTHROPIC_API_KEY)) {
    return {
      kind: 'anthropic',
      model: set(env.ANTHROPIC_MODEL) ? env.ANTHROPIC_MODEL : DEFAULT_ANTHROPIC_MODEL,
      apiKey: env.ANTHROPIC_API_KEY,
      ...(set(env.ANTHROPIC_BASE_URL) ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
    };
  }
  return { kind: 'scripted', reason: 'no OPENAI_BASE_URL, OPENAI_API_KEY or ANTHROPIC_API_KEY set' };
}

/** Loads the adapter lazily, so the offline demo never needs the provider SDKs (a missing one says what to install). */
export async function loadProviderModel(choice: Exclude<ProviderChoice, { kind: 'scripted' }>): Promise<Model> {
  const { kind, ...options } = choice;
  if (kind === 'openai') {
    const { openAICompatible } = await import('../openai.js');
    return openAICompatible(options);
  }
  const { anthropic } = await import('../anthropic.js');
  return anthropic(options);
}

export function describeChoice(choice: ProviderChoice): string {
  if (choice.kind === 'scripted') return `offline scripted model (${choice.reason}; set one to use a real provider)`;
  const where = choice.baseURL ? ` at ${choice.baseURL}` : '';
  return `${choice.kind === 'openai' ? 'OpenAI-compatible' : 'Anthropic'} model ${choice.model}${where}`;
}
