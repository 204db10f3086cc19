import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { viewerHtml } from 'agentchart/trace';
import { buildViewerFiles, buildViewerScript } from '../../visualizations/viewer-build.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the offline viewer files', () => {
  it('are exactly what `npm run viz` generates (src/trace/viewer-script.generated.ts, visualizations/viewer.html)', async () => {
    const stale: string[] = [];
    for (const file of await buildViewerFiles()) {
      const onDisk = await readFile(`${root}${file.path}`, 'utf8').catch(() => null);
      if (onDisk !== file.content) stale.push(onDisk === null ? `${file.path} (missing)` : file.path);
    }
    expect(stale, 'run `npm run viz` and commit the result').toEqual([]);
  });

  it('embed every diagram and no external resource', async () => {
    const page = await readFile(`${root}visualizations/viewer.html`, 'utf8');
    expect([...page.matchAll(/<template data-chart-machine="([^"]+)">/g)].map((match) => match[1])).toEqual([
      'master',
      'turn',
      'toolCall',
    ]);
    expect(page).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    expect(page).toContain("default-src 'none'");
  });

  it('embed a trace so that it cannot close its own script element', async () => {
    const trace =
      '{"kind":"header","format":"agentchart-trace","version":1,"startedAt":"x"}\n{"text":"</script><b>"}\n';
    const page = viewerHtml({ trace, traceName: 'a "quoted" <name>' });
    expect(page).toContain('{"text":"\\u003c/script>\\u003cb>"}');
    expect(page).toContain('data-name="a &quot;quoted&quot; &lt;name&gt;"');
    expect(page.match(/<\/script>/g)).toHaveLength(2);
  });

  it('join the viewer sources into one script with no imports left', async () => {
    const script = await buildViewerScript();
    expect(script.startsWith("(() => {\n'use strict';\n// src/trace/viewer/model.ts\n")).toBe(true);
    expect(script.endsWith('startViewer(document);\n})();\n')).toBe(true);
    expect(script).not.toMatch(/^\s*(import|export)\s/m);
    expect(() => new Function(script)).not.toThrow();
  });
});
