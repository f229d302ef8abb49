import { isIPv4, isIPv6 } from 'node:net';

/** Why an address may not receive webhooks (decisions §8: SSRF guard). */
export type BlockedReason =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared' // carrier-grade NAT, 100.64.0.0/10
  | 'link_local'
  | 'metadata'
  | 'unique_local'
  | 'multicast'
  | 'reserved';

interface Range {
  /** Network bytes; the first `bits` bits must match. */
  network: number[];
  bits: number;
  reason: BlockedReason;
}

function v4(cidr: string, reason: BlockedReason): Range {
  const [address = '', bits = '32'] = cidr.split('/');
  return { network: address.split('.').map(Number), bits: Number(bits), reason };
}

function v6(cidr: string, reason: BlockedReason): Range {
  const [address = '', bits = '128'] = cidr.split('/');
  return { network: ipv6Bytes(address) ?? [], bits: Number(bits), reason };
}

// Cloud instance-metadata endpoints come first so they are reported as such, not as link-local.
const IPV4_BLOCKED: readonly Range[] = [
  v4('169.254.169.254/32', 'metadata'),
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link_local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  v4('192.0.2.0/24', 'reserved'), // documentation
  v4('192.88.99.0/24', 'reserved'), // 6to4 relay anycast
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'), // benchmarking
  v4('198.51.100.0/24', 'reserved'),
  v4('203.0.113.0/24', 'reserved'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // incl. 255.255.255.255 broadcast
];

const IPV6_BLOCKED: readonly Range[] = [
  v6('fd00:ec2::254/128', 'metadata'),
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::/96', 'reserved'), // IPv4-compatible (deprecated)
  v6('64:ff9b:1::/48', 'reserved'), // local-use NAT64
  v6('100::/64', 'reserved'), // discard
  v6('2001::/32', 'reserved'), // Teredo: tunnels to arbitrary IPv4
  v6('2001:2::/48', 'reserved'), // benchmarking
  v6('2001:db8::/32', 'reserved'), // documentation
  v6('fc00::/7', 'unique_local'),
  v6('fe80::/10', 'link_local'),
  v6('fec0::/10', 'reserved'), // site-local (deprecated)
  v6('ff00::/8', 'multicast'),
];

/**
 * Classifies an IP address literal: the reason it may not receive webhooks, or undefined when it
 * is a public unicast address. IPv6 forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address, since that is where a
 * packet ends up. Anything that is not an IP literal is refused as `reserved`.
 */
export function classifyAddress(address: string): BlockedReason | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(literal)) return match(literal.split('.').map(Number), IPV4_BLOCKED);
  // A zone id (`fe80::1%eth0`) only occurs on link-local and multicast addresses.
  const bytes = ipv6Bytes(literal.split('%')[0] ?? '');
  if (bytes === undefined) return 'reserved';
  const embedded = embeddedIpv4(bytes);
  if (embedded !== undefined) return match(embedded, IPV4_BLOCKED);
  return match(bytes, IPV6_BLOCKED);
}

function embeddedIpv4(bytes: number[]): number[] | undefined {
  const startsWith = (prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
  if (startsWith([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return bytes.slice(12); // ::ffff:0:0/96
  if (startsWith([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return bytes.slice(12); // 64:ff9b::/96
  if (startsWith([0x20, 0x02])) return bytes.slice(2, 6); // 2002::/16
  return undefined;
}

function match(bytes: number[], ranges: readonly Range[]): BlockedReason | undefined {
  return ranges.find((range) => inRange(bytes, range))?.reason;
}

function inRange(bytes: number[], range: Range): boolean {
  if (bytes.length !== range.network.length) return false;
  let remaining = range.bits;
  for (let index = 0; remaining > 0; index++, remaining -= 8) {
    const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
    if (((bytes[index] ?? 0) & mask) !== ((range.network[index] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 16 bytes of an IPv6 literal (with `::` and a trailing dotted quad), or undefined. */
export function ipv6Bytes(text: string): number[] | undefined {
  if (!isIPv6(text)) return undefined;
  let groups = text;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (quad !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = quad.split('.').map(Number);
    groups = `${text.slice(0, -quad.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = groups.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const all = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return all.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}
