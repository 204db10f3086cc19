import { describeConformance } from './conformance.js';
import { anthropicHarness } from './harnesses.js';

describeConformance(anthropicHarness);
