import { DomainError } from '@agent-platform/kit';
import type { JsonWebKey as ProtoJwk } from '@agent-platform/proto/identity/v1/auth';
import { errors, importJWK, jwtVerify, type CompactJWSHeaderParameters, type CryptoKey } from 'jose';
import { LRUCache } from 'lru-cache';

export interface AccessTokenVerifierOptions {
  /** AuthService.GetJwks. */
  fetchKeys: () => Promise<ProtoJwk[]>;
  issuer: string;
  audience: string;
  /** Least time between refetches caused by an unknown `kid` (milliseconds). */
  minRefreshIntervalMs: number;
  now?: () => number;
}

export interface VerifiedAccessToken {
  userId: string;
}

const ALGORITHMS = ['EdDSA', 'Ed25519'];

/**
 * Tokens already verified, up to this many (oldest dropped first): a client sends the same token
 * until it expires, and a signature check costs more than the rest of authentication.
 */
const VERIFIED_CACHE_SIZE = 10_000;

interface VerifiedEntry {
  userId: string;
  kid: string;
  /** Epoch milliseconds of the token's `exp`. */
  expiresAtMs: number;
}

function invalid(message: string, cause?: unknown): DomainError {
  return new DomainError('unauthorized', message, cause === undefined ? {} : { cause });
}

/**
 * Verifies access tokens locally against identity's JWK set: fetched at start, refetched (at most
 * once per interval) when a token names a key it does not know, so a key rotation needs no restart.
 */
export class AccessTokenVerifier {
  private keys = new Map<string, CryptoKey | Uint8Array>();
  private readonly verified = new LRUCache<string, VerifiedEntry>({ max: VERIFIED_CACHE_SIZE });
  private lastFetchMs = Number.NEGATIVE_INFINITY;
  private inflight: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.now = options.now ?? Date.now;
  }

  get keyCount(): number {
    return this.keys.size;
  }

  /** Fetches the key set now; concurrent callers share one fetch. */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    const known = this.verified.get(token);
    // Still unexpired and still signed by a published key: the same answer as a full check.
    if (known && known.expiresAtMs > this.now() && this.keys.has(known.kid)) return { userId: known.userId };
    if (known) this.verified.delete(token);
    try {
      const { payload, protectedHeader } = await jwtVerify(token, (header) => this.keyFor(header), {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.now()),
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid('The access token names no user.');
      this.remember(token, { userId: payload.sub, kid: protectedHeader.kid ?? '', expiresAtMs: (payload.exp ?? 0) * 1000 });
      return { userId: payload.sub };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      if (error instanceof errors.JWTExpired) throw invalid('The access token has expired.', error);
      if (error instanceof errors.JOSEError) throw invalid('The access token is invalid.', error);
      throw error;
    }
  }

  private remember(token: string, entry: VerifiedEntry): void {
    this.verified.set(token, entry);
  }

  private async keyFor(header: CompactJWSHeaderParameters): Promise<CryptoKey | Uint8Array> {
    const kid = header.kid;
    if (!kid) throw invalid('The access token names no signing key.');
    let key = this.keys.get(kid);
    // Never fetched successfully (identity was down at start): always try. Otherwise throttle.
    if (!key && (this.keys.size === 0 || this.now() - this.lastFetchMs >= this.options.minRefreshIntervalMs)) {
      await this.refresh();
      key = this.keys.get(kid);
    }
    if (!key) throw invalid('The access token is signed with an unknown key.');
    return key;
  }

  private async load(): Promise<void> {
    this.lastFetchMs = this.now();
    const jwks = await this.options.fetchKeys();
    const keys = new Map<string, CryptoKey | Uint8Array>();
    for (const jwk of jwks) {
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || !jwk.kid) continue;
      keys.set(jwk.kid, await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, 'EdDSA'));
    }
    this.keys = keys;
  }
}
