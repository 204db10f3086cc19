import { describeConformance } from './conformance.js';
import { aiSdk6AnthropicHarness, aiSdk6OpenAIHarness, aiSdkAnthropicHarness, aiSdkOpenAIHarness } from './harnesses.js';

describeConformance(aiSdkAnthropicHarness);
describeConformance(aiSdkOpenAIHarness);
// AI SDK 6 providers (LanguageModelV3), the same suite.
describeConformance(aiSdk6AnthropicHarness);
describeConformance(aiSdk6OpenAIHarness);
