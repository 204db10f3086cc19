import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildViewerFiles } from './viewer-build.js';

// `npm run viz`, after the diagrams: the viewer's script module and visualizations/viewer.html.
const root = fileURLToPath(new URL('..', import.meta.url));
for (const file of await buildViewerFiles()) {
  await writeFile(`${root}${file.path}`, file.content);
  console.log(file.path);
}
