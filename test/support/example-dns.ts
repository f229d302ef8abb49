/**
 * Loaded into a platform process started by a test (`--import`): `example.com`, the domain the
 * documentation's examples use (RFC 2606), resolves as it would on a machine with internet access,
 * to a public address. The machines tests run on have no DNS for public names, and the platform
 * refuses an endpoint whose host does not resolve; nothing is ever delivered there by a test.
 */
import type { LookupAddress } from 'node:dns';
import dns from 'node:dns/promises';
import { syncBuiltinESMExports } from 'node:module';

const EXAMPLE_ADDRESS: LookupAddress = { address: '93.184.215.14', family: 4 };
const systemLookup = dns.lookup.bind(dns);

dns.lookup = ((hostname: string, options?: unknown) =>
  hostname === 'example.com'
    ? Promise.resolve(typeof options === 'object' && options !== null && 'all' in options && options.all ? [EXAMPLE_ADDRESS] : EXAMPLE_ADDRESS)
    : systemLookup(hostname, options as never)) as typeof dns.lookup;
// Named imports of node:dns/promises (`import { lookup } …`) see the replacement too.
syncBuiltinESMExports();
