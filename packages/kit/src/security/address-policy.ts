import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why outbound requests (webhooks, workflow integrations) may not reach an address: decisions §8's SSRF guard. */
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

/** A CIDR written `address/bits`, and why addresses in it are refused. */
type Rule = readonly [cidr: string, reason: BlockedReason];

// Cloud instance-metadata endpoints come first so they are reported as such, not as link-local.
const IPV4_RULES: readonly Rule[] = [
  ['169.254.169.254/32', 'metadata'],
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'reserved'], // documentation
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // incl. 255.255.255.255 broadcast
];

const IPV6_RULES: readonly Rule[] = [
  ['fd00:ec2::254/128', 'metadata'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'reserved'], // IPv4-compatible (deprecated)
  ['64:ff9b:1::/48', 'reserved'], // local-use NAT64
  ['100::/64', 'reserved'], // discard
  ['2001::/32', 'reserved'], // Teredo: tunnels to arbitrary IPv4
  ['2001:2::/48', 'reserved'], // benchmarking
  ['2001:db8::/32', 'reserved'], // documentation
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'reserved'], // site-local (deprecated)
  ['ff00::/8', 'multicast'],
];

/**
 * node:net's BlockList does the matching; one list per rule keeps each range's reason, and the
 * order of the rules decides which reason a range inside another reports.
 */
function compile(rules: readonly Rule[], family: 'ipv4' | 'ipv6'): readonly (readonly [BlockList, BlockedReason])[] {
  return rules.map(([cidr, reason]) => {
    const [network = '', bits = ''] = cidr.split('/');
    const list = new BlockList();
    list.addSubnet(network, Number(bits), family);
    return [list, reason] as const;
  });
}

const IPV4_BLOCKED = compile(IPV4_RULES, 'ipv4');
const IPV6_BLOCKED = compile(IPV6_RULES, 'ipv6');

function match(address: string, family: 'ipv4' | 'ipv6'): BlockedReason | undefined {
  const lists = family === 'ipv4' ? IPV4_BLOCKED : IPV6_BLOCKED;
  return lists.find(([list]) => list.check(address, family))?.[1];
}

/**
 * Classifies an IP address literal: the reason outbound requests may not reach it, or undefined when it
 * is a public unicast address. IPv6 forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address, since that is where a
 * packet ends up. Anything that is not an IP literal is refused as `reserved`.
 */
export function classifyAddress(address: string): BlockedReason | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(literal)) return match(literal, 'ipv4');
  // A zone id (`fe80::1%eth0`) only occurs on link-local and multicast addresses.
  const unzoned = literal.split('%')[0] ?? '';
  const bytes = ipv6Bytes(unzoned);
  if (bytes === undefined) return 'reserved';
  const embedded = embeddedIpv4(bytes);
  if (embedded !== undefined) return match(embedded.join('.'), 'ipv4');
  return match(unzoned, 'ipv6');
}

function embeddedIpv4(bytes: number[]): number[] | undefined {
  const startsWith = (prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
  if (startsWith([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return bytes.slice(12); // ::ffff:0:0/96
  if (startsWith([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return bytes.slice(12); // 64:ff9b::/96
  if (startsWith([0x20, 0x02])) return bytes.slice(2, 6); // 2002::/16
  return undefined;
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
