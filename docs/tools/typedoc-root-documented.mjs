// A TypeDoc plugin (docs/typedoc.config.mjs loads it): every export of the root entry point `agentchart`, and every
// own member of its interfaces and classes, has documentation. TypeDoc's own `notDocumented` check cannot be
// limited to one entry point, and the kits' entry points document their own way.
import { Application, ReflectionKind } from 'typedoc';

const MEMBERS = ReflectionKind.Property | ReflectionKind.Method | ReflectionKind.Accessor;
const CONTAINERS = ReflectionKind.Interface | ReflectionKind.Class;

/** A comment on the reflection itself, or on one of its signatures (functions, methods). */
function documented(reflection) {
  if (reflection.hasComment()) return true;
  const signatures = [...(reflection.signatures ?? []), reflection.getSignature, reflection.setSignature];
  if (signatures.some((signature) => signature?.hasComment())) return true;
  // A property whose type is a function type documented on its call signature.
  return reflection.type?.declaration?.signatures?.some((signature) => signature.hasComment()) ?? false;
}

/** @param {Application} app */
export function load(app) {
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    const root = project.children?.find((child) => child.name === 'index');
    if (!root) {
      app.logger.error('typedoc-root-documented: no module "index" (the root entry point) in the project');
      return;
    }
    for (const exported of root.children ?? []) {
      if (!documented(exported)) app.logger.warn(`agentchart: the export ${exported.name} has no documentation`);
      if (!exported.kindOf(CONTAINERS)) continue;
      for (const member of exported.children ?? []) {
        if (!member.kindOf(MEMBERS) || member.inheritedFrom || documented(member)) continue;
        app.logger.warn(`agentchart: ${exported.name}.${member.name} has no documentation`);
      }
    }
  });
}
