import { describeConformance } from './conformance.js';
import { openAIHarness } from './harnesses.js';

describeConformance(openAIHarness);
