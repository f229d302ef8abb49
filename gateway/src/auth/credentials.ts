import { DomainError } from '@agent-platform/kit';

/** The credential of `Authorization: Bearer <credential>`; anything else is 401. */
export function bearerCredential(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw new DomainError('unauthorized', 'Authentication is required: send Authorization: Bearer <token or API key>.');
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new DomainError('unauthorized', 'The Authorization header must use the Bearer scheme.');
  return match[1];
}

/**
 * decisions §3: the tenant a call asks to act in — the path's `tenant_id` where the route has one,
 * else the optional `tenant_id` query parameter — or undefined for the caller's default tenant.
 */
export function requestedTenant(pathTenant: unknown, queryTenant: unknown): string | undefined {
  const value = typeof pathTenant === 'string' ? pathTenant : queryTenant;
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new DomainError('invalid_request', 'tenant_id may be given once.', { details: [{ field: 'tenant_id', message: 'Given more than once.' }] });
  }
  if (value === '') throw DomainError.validation([{ field: 'tenant_id', message: 'Must not be empty.' }]);
  return value;
}
