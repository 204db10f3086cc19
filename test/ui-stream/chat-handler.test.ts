import { describeChatHandler } from './chat-scenarios.js';

describeChatHandler('v7');
