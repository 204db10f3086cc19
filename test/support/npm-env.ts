/** npm as a user runs it: none of the npm_* variables of the `npm test` around us (prefixes, lifecycle). */
export function userEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || keep.has(key.toLowerCase())),
  );
}
