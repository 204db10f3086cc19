/**
 * JSON with Maps written as key-sorted entry lists, so two equal states serialise equally
 * whatever order their Maps were filled in (`JSON.stringify` writes a Map as `{}`).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof Map) {
      return {
        $map: [...item.entries()].sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0)),
      };
    }
    if (item instanceof Set) return { $set: [...item].map(String).sort() };
    return item;
  });
}
