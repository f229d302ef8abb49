import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { BlockedAddressError, OutboundPolicy, type HostResolver } from './outbound-policy.js';

const DNS: Record<string, LookupAddress[]> = {
  'hooks.example.com': [{ address: '93.184.216.34', family: 4 }],
  'dual.example.com': [
    { address: '2606:4700::1', family: 6 },
    { address: '93.184.216.34', family: 4 },
  ],
  'sneaky.example.com': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'metadata.example.com': [{ address: 'fd00:ec2::254', family: 6 }],
};

const resolve: HostResolver = (hostname) => {
  const found = DNS[hostname];
  if (found) return Promise.resolve(found);
  return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
};

const strict = new OutboundPolicy({ allowPrivateNetworks: false, resolve });
const relaxed = new OutboundPolicy({ allowPrivateNetworks: true, resolve });

function lookup(policy: OutboundPolicy, hostname: string, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: number | undefined }>((done) => {
    policy.lookup(hostname, { all }, (error, address, family) => done({ error, address, family }));
  });
}

describe('OutboundPolicy.checkUrl', () => {
  it('accepts https URLs whose host resolves only to public addresses', async () => {
    expect(await strict.checkUrl('https://hooks.example.com/in')).toBeUndefined();
    expect(await strict.checkUrl('https://dual.example.com:8443/in?x=1')).toBeUndefined();
    expect(await strict.checkUrl('https://93.184.216.34/in')).toBeUndefined();
  });

  it.each([
    ['http://hooks.example.com/in', 'must be an https URL'],
    ['ftp://hooks.example.com/in', 'must be an https URL'],
    ['not a url', 'must be an absolute URL'],
    ['https://user:pw@hooks.example.com/', 'must not contain credentials'],
    ['https://127.0.0.1/in', 'loopback address (127.0.0.1)'],
    ['https://2130706433/in', 'loopback address (127.0.0.1)'],
    ['https://10.0.0.1/in', 'private network address (10.0.0.1)'],
    ['https://169.254.169.254/latest/meta-data', 'cloud metadata address'],
    ['https://[::1]/in', 'loopback address (::1)'],
    ['https://[::ffff:127.0.0.1]/in', 'loopback address'],
    ['https://[fd00:ec2::254]/in', 'cloud metadata address'],
    ['https://sneaky.example.com/in', 'private network address (10.0.0.5)'],
    ['https://metadata.example.com/in', 'cloud metadata address'],
    ['https://nowhere.example.com/in', 'does not resolve'],
    [`https://hooks.example.com/${'a'.repeat(2_100)}`, 'at most 2048 characters'],
  ])('refuses %s', async (url, problem) => {
    expect(await strict.checkUrl(url)).toContain(problem);
  });

  it('refuses a name that really resolves to loopback (localhost, system resolver)', async () => {
    expect(await new OutboundPolicy({ allowPrivateNetworks: false }).checkUrl('https://localhost:8443/in')).toMatch(/loopback address/);
  });

  it('lets http and private addresses through when the operator allows private networks', async () => {
    expect(await relaxed.checkUrl('http://127.0.0.1:8080/in')).toBeUndefined();
    expect(await relaxed.checkUrl('http://localhost/in')).toBeUndefined();
    expect(await relaxed.checkUrl('ftp://127.0.0.1/in')).toBe('must be an http or https URL');
  });
});

describe('OutboundPolicy at connect time', () => {
  it('resolves public names like dns.lookup does, for one address or all', async () => {
    expect(await lookup(strict, 'dual.example.com', false)).toEqual({ error: null, address: '2606:4700::1', family: 6 });
    expect(await lookup(strict, 'dual.example.com', true)).toMatchObject({ error: null, address: DNS['dual.example.com'] });
  });

  it('refuses to connect when any address of the name is blocked', async () => {
    const { error } = await lookup(strict, 'sneaky.example.com', true);
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error?.message).toMatch(/sneaky\.example\.com must not point to a private network address \(10\.0\.0\.5\)/);
  });

  it('passes resolver failures through', async () => {
    expect((await lookup(strict, 'nowhere.example.com', false)).error?.code).toBe('ENOTFOUND');
  });

  it('checks IP-literal hosts, which never reach lookup', () => {
    expect(strict.checkHost('127.0.0.1')).toBeInstanceOf(BlockedAddressError);
    expect(strict.checkHost('[::1]')?.message).toMatch(/loopback/);
    expect(strict.checkHost('93.184.216.34')).toBeUndefined();
    expect(strict.checkHost('hooks.example.com')).toBeUndefined();
    expect(relaxed.checkHost('127.0.0.1')).toBeUndefined();
  });

  it('allows private addresses when the operator does', async () => {
    expect((await lookup(relaxed, 'sneaky.example.com', false)).error).toBeNull();
  });
});
