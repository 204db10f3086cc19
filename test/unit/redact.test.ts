import { describe, expect, it } from 'vitest';
import { knownSecrets, redactModelError, redactSecrets } from '../../src/domain/redact.js';
import { modelError } from 'agentchart/model-kit';

const KEY = 'gw_live_4f1c2a9e8b7d6c5a';

describe('redactSecrets', () => {
  it('replaces a known secret wherever it appears, longest first', () => {
    expect(redactSecrets(`bad key ${KEY} (${KEY}x)`, [KEY])).toBe('bad key [redacted] ([redacted]x)');
    expect(redactSecrets(`${KEY}-suffix`, [KEY, `${KEY}-suffix`])).toBe('[redacted]');
    // Too short to search for: it would blank ordinary words.
    expect(redactSecrets('a key of abc', ['abc'])).toBe('a key of abc');
  });

  it('replaces Authorization, x-api-key and friends in header lines, JSON and escaped JSON', () => {
    const cases: Array<[string, string]> = [
      ['Authorization: Bearer abc.def-123', 'Authorization: [redacted]'],
      ['proxy-authorization: Basic dXNlcjpwYXNz\r\nhost: x', 'proxy-authorization: [redacted]\r\nhost: x'],
      ['x-api-key: mykeyvalue, next', 'x-api-key: [redacted], next'],
      ['{"authorization":"Bearer tok12345","a":1}', '{"authorization":"[redacted]","a":1}'],
      ['{"headers":{"X-Api-Key":"abc12345"}}', '{"headers":{"X-Api-Key":"[redacted]"}}'],
      ['{\\"api-key\\":\\"azure1234\\"}', '{\\"api-key\\":\\"[redacted]\\"}'],
      ["{'x-goog-api-key': 'AIzaSy123456'}", "{'x-goog-api-key': '[redacted]'}"],
      ['token rejected: Bearer eyJhbGciOi.eyJzdWIi.sig', 'token rejected: Bearer [redacted]'],
    ];
    for (const [text, clean] of cases) expect(redactSecrets(text), text).toBe(clean);
    // Words about headers stay.
    expect(redactSecrets('missing authorization header; invalid x-api-key')).toBe(
      'missing authorization header; invalid x-api-key',
    );
  });

  it('replaces sk-…-shaped tokens, not words that merely start with sk-', () => {
    expect(redactSecrets('key sk-proj-AbC123dEf456GhI789 is revoked')).toBe('key [redacted] is revoked');
    expect(redactSecrets('sk-ant-api03-xyz_XYZ-0123456789abc.')).toBe('[redacted].');
    expect(redactSecrets('try sk-learn or risk-assessment')).toBe('try sk-learn or risk-assessment');
    // A key the provider already masked is left as it is.
    expect(redactSecrets('Incorrect API key provided: sk-proj-********abcd')).toBe(
      'Incorrect API key provided: sk-proj-********abcd',
    );
  });

  it('is idempotent', () => {
    const text = `Authorization: Bearer ${KEY} x-api-key: ${KEY} sk-abcdefghijklmnop`;
    const once = redactSecrets(text, [KEY]);
    expect(redactSecrets(once, [KEY])).toBe(once);
    expect(once).not.toContain(KEY);
  });
});

describe('redactModelError and knownSecrets', () => {
  it('keeps the error as it is when there is nothing to redact, and redacts only the message', () => {
    const clean = modelError('auth', 'invalid key', { status: 401 });
    expect(redactModelError(clean, [KEY])).toBe(clean);
    expect(redactModelError(modelError('auth', `invalid key ${KEY}`, { status: 401 }), [KEY])).toEqual({
      kind: 'auth',
      message: 'invalid key [redacted]',
      retryable: false,
      status: 401,
    });
  });

  it('collects the keys and the values of auth-like headers, with and without a Bearer prefix', () => {
    expect(
      knownSecrets([KEY, undefined, null, ''], {
        Authorization: 'Bearer gateway-token-1',
        'X-Custom-Key': 'custom-key-value',
        'OpenAI-Organization': 'org-123',
        'x-trace': undefined,
      }),
    ).toEqual([KEY, 'Bearer gateway-token-1', 'gateway-token-1', 'custom-key-value']);
  });
});
