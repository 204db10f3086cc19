// `npm run demo`: the Node version is checked before the demo is loaded (an older Node could not load it).
import { exitUnlessSupportedNode } from '../platform/node-version.js';

exitUnlessSupportedNode('npm run demo');
await import('./cli.js');
