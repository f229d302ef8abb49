import type { Logger } from '@agent-platform/kit';
import { initOrm, type Orm } from '@agent-platform/kit/db';
import { DeliveryAttemptSchema, DeliverySchema } from './deliveries/deliveries.entity.js';
import { migrations } from './migrations/index.js';
import { WebhookSchema } from './webhooks/webhooks.entity.js';

export { migrations } from './migrations/index.js';

/** Every table the webhook dispatcher maps; its database holds nothing else. */
export const entities = [WebhookSchema, DeliverySchema, DeliveryAttemptSchema];

/** Connects and brings the schema up to date (migrations run here, never in handlers). */
export function openDatabase(databaseUrl: string, logger: Logger, poolMax?: number): Promise<Orm> {
  return initOrm({ clientUrl: databaseUrl, entities, migrations, logger, ...(poolMax === undefined ? {} : { poolMax }) });
}
