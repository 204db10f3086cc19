import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderVisualizations } from './render.js';

// `npm run viz`: regenerates every diagram next to this script.
const directory = fileURLToPath(new URL('.', import.meta.url));
for (const file of await renderVisualizations()) {
  await writeFile(`${directory}${file.name}`, file.content);
  console.log(`visualizations/${file.name}`);
}
