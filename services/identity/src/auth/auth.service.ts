import { DomainError, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { characterCount, isValidEmail, normalizeEmail } from '../shared/validation.js';
import type { UsersRepository } from '../users/users.repository.js';
import { MAX_PASSWORD_LENGTH } from '../users/users.service.js';
import type { AuthRepository } from './auth.repository.js';
import type { PasswordHasher } from './passwords.js';
import type { PublicJwk, SigningKeys } from './signing-keys.js';
import { newRefreshToken, parseRefreshToken, secretMatches, signAccessToken, type AccessTokenSettings } from './tokens.js';

export interface AuthServiceOptions {
  em: EntityManager;
  users: UsersRepository;
  repository: AuthRepository;
  passwords: PasswordHasher;
  signingKeys: SigningKeys;
  accessToken: AccessTokenSettings;
  /** Seconds a refresh token stays usable; each rotation issues a new one with the full lifetime. */
  refreshTokenTtlSeconds: number;
  logger: Logger;
}

export interface TokenPair {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  refreshToken: string;
  /** Seconds. */
  refreshExpiresIn: number;
}

// One message for an unknown e-mail and a wrong password alike (decisions §3).
const INVALID_CREDENTIALS = 'Invalid e-mail or password.';
const INVALID_REFRESH_TOKEN = 'The refresh token is invalid, expired or revoked.';

type RefreshOutcome = { kind: 'rotated'; pair: TokenPair } | { kind: 'rejected' } | { kind: 'replayed'; userId: string; familyId: string };

/** Credentials: password login, refresh-token rotation with reuse detection, and the JWKS. */
export class AuthService {
  private readonly options: AuthServiceOptions;

  constructor(options: AuthServiceOptions) {
    this.options = options;
  }

  /**
   * An unknown e-mail costs the same scrypt work as a wrong password, so neither the answer nor
   * its timing tells whether an account exists.
   */
  async login(email: string, password: string): Promise<TokenPair> {
    const { users, passwords } = this.options;
    const normalized = normalizeEmail(email);
    const plausible = isValidEmail(normalized) && characterCount(password) <= MAX_PASSWORD_LENGTH;
    const user = plausible ? await users.findByEmail(normalized) : null;
    const valid = user ? await passwords.verify(password, user.passwordHash) : await passwords.verifyNothing(password);
    if (!user || !valid || !user.isActive) throw new DomainError('unauthorized', INVALID_CREDENTIALS);

    if (passwords.needsRehash(user.passwordHash)) {
      await users.updatePasswordHash(user.id, await passwords.hash(password));
    }
    return this.issue(user.id, undefined, new Date());
  }

  /**
   * Rotates a refresh token: the presented one is spent and the next one of its family issued.
   * Presenting a spent token again means it leaked (or a client replayed it): the whole family is
   * revoked, so whoever holds its newest token has to log in again (OAuth 2.0 Security BCP §4.14).
   */
  async refresh(token: string): Promise<TokenPair> {
    const parsed = parseRefreshToken(token);
    if (!parsed) throw new DomainError('unauthorized', INVALID_REFRESH_TOKEN);
    const { em, repository, users } = this.options;
    const now = new Date();
    const outcome = await em.transactional(async (): Promise<RefreshOutcome> => {
      const row = await repository.findRefreshTokenForUpdate(parsed.id);
      if (!row || !secretMatches(parsed.secret, row.tokenHash) || row.revokedAt !== null) return { kind: 'rejected' };
      if (row.spentAt !== null) {
        await repository.revokeFamily(row.familyId, now);
        return { kind: 'replayed', userId: row.userId, familyId: row.familyId };
      }
      if (row.expiresAt.getTime() <= now.getTime()) return { kind: 'rejected' };
      const user = await users.findById(row.userId);
      if (!user?.isActive) return { kind: 'rejected' };
      await repository.markSpent(row, now);
      return { kind: 'rotated', pair: await this.issue(row.userId, row.familyId, now) };
    });
    if (outcome.kind === 'rotated') return outcome.pair;
    if (outcome.kind === 'replayed') {
      this.options.logger.warn({ user_id: outcome.userId, family_id: outcome.familyId }, 'spent refresh token presented again; family revoked');
    }
    throw new DomainError('unauthorized', INVALID_REFRESH_TOKEN);
  }

  jwks(): Promise<PublicJwk[]> {
    return this.options.signingKeys.jwks();
  }

  /** An access token and a refresh token; a new family unless rotating within one. */
  private async issue(userId: string, familyId: string | undefined, now: Date): Promise<TokenPair> {
    const { accessToken: settings, refreshTokenTtlSeconds, repository, signingKeys } = this.options;
    const refresh = newRefreshToken();
    await repository.insertRefreshToken({
      id: refresh.id,
      familyId: familyId ?? refresh.id,
      userId,
      tokenHash: refresh.hash,
      createdAt: now,
      expiresAt: new Date(now.getTime() + refreshTokenTtlSeconds * 1_000),
    });
    return {
      accessToken: await signAccessToken(userId, signingKeys.current(), settings, now),
      expiresIn: settings.ttlSeconds,
      refreshToken: refresh.token,
      refreshExpiresIn: refreshTokenTtlSeconds,
    };
  }
}
