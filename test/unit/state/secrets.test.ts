// secrets.json: the join, operator and page tokens are made once and kept; a file from before the page token
// keeps its tokens and gains one; a damaged token is replaced alone; the file is owner-only.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateSecrets, MAX_RETIRED_JOIN_TOKENS, rotateJoinToken, SECRETS_FILE } from '../../../src-main/app/secrets';
import { tempDataDir } from './temp-state';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

describe('loadOrCreateSecrets', () => {
  it('makes three distinct tokens once and returns the same ones after', async () => {
    const dir = path.join(tempDataDir(), 'data');
    const first = await loadOrCreateSecrets(dir);
    expect(first.joinToken).toMatch(TOKEN);
    expect(first.operatorToken).toMatch(TOKEN);
    expect(first.pageToken).toMatch(TOKEN);
    expect(new Set([first.joinToken, first.operatorToken, first.pageToken]).size).toBe(3);
    expect(await loadOrCreateSecrets(dir)).toEqual(first);
    if (process.platform !== 'win32') expect(statSync(path.join(dir, SECRETS_FILE)).mode & 0o777).toBe(0o600);
  });

  it('keeps the tokens of a file written before the page token existed and adds one', async () => {
    const dir = tempDataDir();
    const old = { joinToken: 'j'.repeat(43), operatorToken: 'o'.repeat(43) };
    writeFileSync(path.join(dir, SECRETS_FILE), JSON.stringify(old), { mode: 0o600 });
    const secrets = await loadOrCreateSecrets(dir);
    expect(secrets).toMatchObject(old);
    expect(secrets.pageToken).toMatch(TOKEN);
    expect(JSON.parse(readFileSync(path.join(dir, SECRETS_FILE), 'utf8'))).toEqual(secrets);
  });

  it('replaces only a token that is not valid, and starts over from a file that is not JSON', async () => {
    const dir = tempDataDir();
    writeFileSync(path.join(dir, SECRETS_FILE), JSON.stringify({ joinToken: 'j'.repeat(43), operatorToken: 'short', pageToken: 'p'.repeat(43) }));
    const secrets = await loadOrCreateSecrets(dir);
    expect(secrets.joinToken).toBe('j'.repeat(43));
    expect(secrets.pageToken).toBe('p'.repeat(43));
    expect(secrets.operatorToken).toMatch(TOKEN);
    writeFileSync(path.join(dir, SECRETS_FILE), '{not json');
    const fresh = await loadOrCreateSecrets(dir);
    expect(fresh.joinToken).not.toBe('j'.repeat(43));
    expect(await loadOrCreateSecrets(dir)).toEqual(fresh);
  });
});

describe('rotateJoinToken', () => {
  it('makes a new join token, keeps the replaced ones newest first (at most 8), and a reload sees the same', async () => {
    const dir = tempDataDir();
    const secrets = await loadOrCreateSecrets(dir);
    expect(secrets.retiredJoinTokens).toEqual([]);
    const before = { operator: secrets.operatorToken, page: secrets.pageToken };
    const seen = [secrets.joinToken];
    for (let i = 0; i < 10; i += 1) {
      const next = await rotateJoinToken(dir, secrets);
      expect(next).toMatch(TOKEN);
      expect(secrets.joinToken).toBe(next); // changed in place: the running coordinator takes it at once
      seen.unshift(next);
    }
    expect(secrets.retiredJoinTokens).toEqual(seen.slice(1, 1 + MAX_RETIRED_JOIN_TOKENS));
    expect(MAX_RETIRED_JOIN_TOKENS).toBe(8);
    expect(secrets).toMatchObject({ operatorToken: before.operator, pageToken: before.page });
    expect(await loadOrCreateSecrets(dir)).toEqual(secrets);
    if (process.platform !== 'win32') expect(statSync(path.join(dir, SECRETS_FILE)).mode & 0o777).toBe(0o600);
  });

  it('drops retired entries that are not tokens', async () => {
    const dir = tempDataDir();
    writeFileSync(path.join(dir, SECRETS_FILE), JSON.stringify({ joinToken: 'j'.repeat(43), operatorToken: 'o'.repeat(43), pageToken: 'p'.repeat(43), retiredJoinTokens: ['r'.repeat(43), 'bad', 7] }));
    expect((await loadOrCreateSecrets(dir)).retiredJoinTokens).toEqual(['r'.repeat(43)]);
  });
});
