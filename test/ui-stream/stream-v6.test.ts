import { vi } from 'vitest';
import { describeUIStream } from './stream-scenarios.js';

// The bridge's `import('ai')` and the test's client side get AI SDK 6 (a devDependency under the
// alias ai-v6): the same scenarios, read back by AI SDK 6's own chat transport.
vi.mock('ai', () => import('ai-v6'));

describeUIStream('v6');
