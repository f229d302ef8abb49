/** Who is calling, in which tenant, after authentication and tenant resolution. */
export interface AuthenticatedPrincipal {
  kind: 'user' | 'api_key';
  /** The user, or the user who created the API key. */
  userId: string;
  /** Set for API keys only. */
  apiKeyId: string | undefined;
  tenantId: string;
  /** owner | admin | member | viewer; for a key, its creator's current role. */
  role: string;
  /** Empty for users; a key's scopes otherwise. */
  scopes: string[];
  /** The tenant's plan, which selects the rate limits. */
  plan: string;
}
