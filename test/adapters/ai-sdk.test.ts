import { describeConformance } from './conformance.js';
import { aiSdkAnthropicHarness, aiSdkOpenAIHarness } from './harnesses.js';

describeConformance(aiSdkAnthropicHarness);
describeConformance(aiSdkOpenAIHarness);
