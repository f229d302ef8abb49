import { createLogger } from '@agent-platform/kit';
import { migratedSchemaDrift } from '@agent-platform/kit/testing';
import { expect, test } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';

const logger = createLogger({ service: 'schema-test', level: 'silent' });

test('the migrated schema and the entities agree, column by column', async () => {
  expect(await migratedSchemaDrift({ name: 'workflows', migrations, open: (url) => openDatabase(url, logger) })).toEqual([]);
});
