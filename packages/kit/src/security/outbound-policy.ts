import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { classifyAddress, type BlockedReason } from './address-policy.js';

/** Resolves a host name to every address it has (like `dns.lookup` with `all: true`). */
export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** node:net's `lookup` option: called at connect time for every host name it dials. */
export type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type ConnectLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export const MAX_URL_LENGTH = 2_048;

/** Raised at connect time when a host resolves to an address outbound requests may not reach. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
}

export interface OutboundPolicyOptions {
  /** ALLOW_PRIVATE_NETWORK_URLS: http and private addresses become acceptable (development, tests). */
  allowPrivateNetworks: boolean;
  resolve?: HostResolver;
}

/**
 * The SSRF guard of decisions §8, applied twice: when an endpoint URL is saved (`checkUrl`), and
 * again when a delivery connects (`lookup`, `checkHost`), because what a name resolves to can
 * change in between (DNS rebinding).
 */
export class OutboundPolicy {
  readonly allowPrivateNetworks: boolean;
  private readonly resolve: HostResolver;

  constructor(options: OutboundPolicyOptions) {
    this.allowPrivateNetworks = options.allowPrivateNetworks;
    this.resolve = options.resolve ?? systemResolver;
  }

  /** What is wrong with an endpoint URL, as a message for the field `url`; undefined when it is acceptable. */
  async checkUrl(raw: string): Promise<string | undefined> {
    if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'must be an absolute URL';
    }
    const schemes = this.allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) return this.allowPrivateNetworks ? 'must be an http or https URL' : 'must be an https URL';
    if (url.username !== '' || url.password !== '') return 'must not contain credentials';
    if (url.hostname === '') return 'must name a host';
    if (this.allowPrivateNetworks) return undefined;

    const host = bareHost(url.hostname);
    if (isIP(host) !== 0) return describe(host, classifyAddress(host));
    let addresses: LookupAddress[];
    try {
      addresses = await this.resolve(host);
    } catch (error) {
      // A name that does not exist is a mistake worth reporting; a resolver hiccup is not, and
      // the connect-time check still guards every send.
      if ((error as NodeJS.ErrnoException).code === 'ENOTFOUND') return 'has a host name that does not resolve';
      return undefined;
    }
    for (const { address } of addresses) {
      const problem = describe(address, classifyAddress(address));
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  /** Connect-time check of a URL's host when it is an IP literal (names go through `lookup`). */
  checkHost(hostname: string): BlockedAddressError | undefined {
    const host = bareHost(hostname);
    if (this.allowPrivateNetworks || isIP(host) === 0) return undefined;
    const reason = classifyAddress(host);
    return reason === undefined ? undefined : new BlockedAddressError(`refused to connect: ${describe(host, reason)}`);
  }

  /**
   * A `lookup` for node:http that resolves like the system and refuses the connection when any
   * address of the name is blocked, so the address dialled is the address checked.
   */
  readonly lookup: ConnectLookup = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((entry) => entry.family === options.family) : all;
        if (!this.allowPrivateNetworks) {
          for (const { address } of all) {
            const reason = classifyAddress(address);
            if (reason !== undefined) {
              callback(new BlockedAddressError(`refused to connect: ${hostname} ${describe(address, reason)}`), '', 0);
              return;
            }
          }
        }
        const [first] = wanted;
        if (first === undefined) {
          callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all === true) {
          callback(null, wanted);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

const REASON_TEXT: Record<BlockedReason, string> = {
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private network address',
  shared: 'a carrier-grade NAT address',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata address',
  unique_local: 'a unique local address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

function describe(address: string, reason: BlockedReason | undefined): string | undefined {
  return reason === undefined ? undefined : `must not point to ${REASON_TEXT[reason]} (${address})`;
}
