import { describeUIStream } from './stream-scenarios.js';

describeUIStream('v7');
