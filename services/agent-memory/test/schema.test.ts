import { createLogger } from '@agent-platform/kit';
import { createTestDatabase, schemaDrift } from '@agent-platform/kit/testing';
import { expect, test } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';

const logger = createLogger({ service: 'schema-test', level: 'silent' });

test('the migrated schema and the entities agree, column by column', async () => {
  const database = await createTestDatabase({ name: 'agents', migrations, migrate: (url) => openDatabase(url, logger).then((orm) => orm.close()) });
  const orm = await openDatabase(database.url, logger);
  try {
    expect(await schemaDrift(orm)).toEqual([]);
  } finally {
    await orm.close();
    await database.drop();
  }
});
