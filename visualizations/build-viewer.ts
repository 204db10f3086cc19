import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildStudioFiles } from './studio-build.js';
import { buildViewerFiles } from './viewer-build.js';

// `npm run viz`, after the diagrams: the viewer's script module and visualizations/viewer.html, the studio's script and diagrams.
const root = fileURLToPath(new URL('..', import.meta.url));
for (const file of [...(await buildViewerFiles()), ...(await buildStudioFiles())]) {
  await writeFile(`${root}${file.path}`, file.content);
  console.log(file.path);
}
