// Test helpers: import from 'agentchart/testing'.
export {};
