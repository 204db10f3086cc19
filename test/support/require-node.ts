// Run first by `npm test` (tsx runs on old Node too): an unsupported Node stops here, saying what to do.
import { exitUnlessSupportedNode } from '../../src/platform/node-version.js';

exitUnlessSupportedNode(process.argv[2] ?? 'npm test');
