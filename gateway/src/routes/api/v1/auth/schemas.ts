import type { TokenPair } from '@agent-platform/proto/identity/v1/auth';
import { z } from 'zod';
import { Timestamp } from '../../../../http/schemas.js';

export const RegisterBody = z.object({
  email: z.email().max(254).describe('Used as the login name; stored in lower case.'),
  password: z.string().min(8).max(128),
  full_name: z.string().trim().min(1).max(200).optional(),
  company: z.string().trim().min(1).max(200).optional().describe('Names the tenant created for you.'),
}).meta({ examples: [{ email: 'ada@example.com', password: 'correct horse battery staple', full_name: 'Ada Lovelace', company: 'Analytical Engines' }] });

export const RegisteredUser = z.object({
  id: z.string(),
  email: z.string(),
  full_name: z.string(),
  tenant_id: z.string(),
  credits: z.int(),
  created_at: Timestamp,
});

/** The spec's form fields (`username` is the e-mail), in a form or a JSON body. */
export const LoginBody = z.object({
  username: z.string().trim().min(1).max(254).describe('Your e-mail address.'),
  password: z.string().min(1).max(1024),
}).meta({ examples: [{ username: 'ada@example.com', password: 'correct horse battery staple' }] });

export const RefreshBody = z.object({ refresh_token: z.string().min(1).max(4096) }).meta({ examples: [{ refresh_token: 'rt_9f1c2e7d4b3a…' }] });

export const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.int().describe('Seconds.'),
  refresh_token: z.string(),
  refresh_expires_in: z.int().describe('Seconds.'),
});

export function tokenBody(tokens: TokenPair | undefined): z.output<typeof TokenResponse> {
  if (!tokens) throw new Error('Identity answered without tokens.');
  return {
    access_token: tokens.accessToken,
    token_type: 'bearer',
    expires_in: tokens.expiresIn,
    refresh_token: tokens.refreshToken,
    refresh_expires_in: tokens.refreshExpiresIn,
  };
}

export const CurrentUser = z.object({
  id: z.string(),
  email: z.string(),
  full_name: z.string(),
  is_active: z.boolean(),
  created_at: Timestamp,
  tenants: z.array(z.object({ id: z.string(), name: z.string(), role: z.string() })),
});
