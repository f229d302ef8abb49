import { describe, expect, it } from 'vitest';
import { classifyAddress, ipv6Bytes } from './address-policy.js';

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
  ])('refuses IPv4 %s as %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '11.0.0.1', '223.255.255.255'])(
    'accepts public IPv4 %s',
    (address) => {
      expect(classifyAddress(address)).toBeUndefined();
    },
  );

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fd00:ec2::254', 'metadata'],
    ['fc00::1', 'unique_local'],
    ['fdff:ffff::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['fec0::1', 'reserved'],
  ])('refuses IPv6 %s as %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
  ])('judges IPv6 %s that embeds an IPv4 address by that address (%s)', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])('accepts public IPv6 %s', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });

  it('refuses what is not an IP literal at all', () => {
    expect(classifyAddress('localhost')).toBe('reserved');
    expect(classifyAddress('')).toBe('reserved');
    expect(classifyAddress('1.2.3')).toBe('reserved');
  });
});

describe('ipv6Bytes', () => {
  it('expands :: and a trailing dotted quad', () => {
    expect(ipv6Bytes('::1')).toEqual([...Array<number>(15).fill(0), 1]);
    expect(ipv6Bytes('1::')).toEqual([0, 1, ...Array<number>(14).fill(0)]);
    expect(ipv6Bytes('::ffff:1.2.3.4')).toEqual([...Array<number>(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]);
    expect(ipv6Bytes('2001:db8:0:0:0:0:2:1')).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1]);
    expect(ipv6Bytes('not-an-address')).toBeUndefined();
  });
});
