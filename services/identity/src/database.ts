import { initOrm, type Orm } from '@agent-platform/kit/db';
import { OutboxSchema } from '@agent-platform/kit/events';
import type { Logger } from '@agent-platform/kit';
import { ApiKeySchema } from './api-keys/api-keys.entity.js';
import { RefreshTokenSchema, SigningKeySchema } from './auth/auth.entity.js';
import { CreditTransactionSchema, PurchaseSchema } from './billing/billing.entity.js';
import { migrations } from './migrations/index.js';
import { MembershipSchema, TenantSchema } from './tenants/tenants.entity.js';
import { UserSchema } from './users/users.entity.js';

export { migrations } from './migrations/index.js';

/** Every table the identity service maps; its database holds nothing else. */
export const entities = [
  UserSchema,
  TenantSchema,
  MembershipSchema,
  SigningKeySchema,
  RefreshTokenSchema,
  ApiKeySchema,
  CreditTransactionSchema,
  PurchaseSchema,
  OutboxSchema,
];

/** Connects and brings the schema up to date (migrations run here, never in handlers). */
export function openDatabase(databaseUrl: string, logger: Logger): Promise<Orm> {
  return initOrm({ clientUrl: databaseUrl, entities, migrations, logger });
}
