import { AgentError } from '../domain/errors.js';

/** An optional peer dependency of one subpath entry. */
export interface OptionalPackage {
  /** The npm package (`openai`). */
  name: string;
  /** The versions we support (`^6 || ^7`). */
  range: string;
  /** Who needs it (`agentchart/openai`). */
  neededBy: string;
}

/** `AgentError('MissingDependency')` naming the package and the command that installs it. */
export function missingDependency(pkg: OptionalPackage): AgentError {
  return new AgentError(
    'MissingDependency',
    `${pkg.neededBy} needs the optional peer dependency "${pkg.name}" (${pkg.range}), which is not installed. ` +
      `Install it with: npm install ${pkg.name}`,
  );
}

/**
 * Throws `MissingDependency` now, where the adapter is created, if the package cannot be found.
 * Resolving is synchronous and loads nothing; where `import.meta.resolve` is missing (some
 * bundlers), the load at first use reports it instead.
 */
export function assertInstalled(pkg: OptionalPackage): void {
  if (typeof import.meta.resolve !== 'function') return;
  try {
    import.meta.resolve(pkg.name);
  } catch (error) {
    if (isModuleNotFound(error)) throw missingDependency(pkg);
    throw error;
  }
}

/**
 * A package loaded once, on first use: a static import in a subpath entry would fail with a bare
 * ERR_MODULE_NOT_FOUND before any code of ours runs. A package that cannot be found becomes
 * `MissingDependency`.
 */
export function lazyPackage<Module>(pkg: OptionalPackage, load: () => Promise<Module>): () => Promise<Module> {
  let loading: Promise<Module> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined; // installed later? the next use tries again
      throw isModuleNotFound(error) ? missingDependency(pkg) : error;
    });
    return loading;
  };
}

/** Node's not-found codes, also on a wrapped error's cause (loaders and test runners wrap import errors). */
export function isModuleNotFound(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || isModuleNotFound(cause, depth + 1);
}
