import { vi } from 'vitest';
import { describeChatHandler } from './chat-scenarios.js';

// The handler's `import('ai')` and the client (the AI SDK's Chat and chat transport) are AI SDK 6.
vi.mock('ai', () => import('ai-v6'));

describeChatHandler('v6');
