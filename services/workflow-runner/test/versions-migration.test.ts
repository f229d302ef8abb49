import { createLogger } from '@agent-platform/kit';
import { initOrm } from '@agent-platform/kit/db';
import { createTestDatabase } from '@agent-platform/kit/testing';
import { expect, onTestFinished, test } from 'vitest';
import { entities, migrations, openDatabase } from '../src/database.js';

const logger = createLogger({ service: 'migration-test', level: 'silent' });
const BEFORE_VERSIONS = migrations.slice(0, migrations.findIndex((migration) => migration.name === '0004_workflow_versions'));

test('0004 makes each existing workflow version 1 of its current graph and each existing execution run version 1', async () => {
  // A database as released before versions, with data in it, then brought up to date.
  const database = await createTestDatabase({
    name: 'workflows_pre_versions',
    migrations: BEFORE_VERSIONS,
    migrate: async (url) => {
      const orm = await initOrm({ clientUrl: url, entities, migrations: BEFORE_VERSIONS, logger });
      await orm.close();
    },
  });
  onTestFinished(() => database.drop());
  const nodes = [{ id: 'only', type: 'condition', config: { rules: [] } }];
  await database.query(
    `insert into workflows (id, tenant_id, name, status, trigger_type, nodes, edges, created_by, created_at, updated_at)
     values ('wf_old', 'tnt_old', 'Old', 'active', 'manual', $1, '[]', 'usr_author', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z')`,
    [JSON.stringify(nodes)],
  );
  await database.query(
    `insert into executions (id, tenant_id, workflow_id, status, trigger, graph, input, started_at, deadline_at, created_by)
     values ('exe_old', 'tnt_old', 'wf_old', 'completed', 'manual', $1, '{}', '2026-02-02T00:00:00Z', '2026-02-02T00:05:00Z', 'usr_author')`,
    [JSON.stringify({ nodes, edges: [] })],
  );

  const orm = await openDatabase(database.url, logger);
  await orm.close();

  expect(await database.query(`select version from workflows`)).toEqual([{ version: 1 }]);
  expect(await database.query(`select workflow_id, version, nodes, edges, created_at, created_by from workflow_versions`)).toEqual([
    { workflow_id: 'wf_old', version: 1, nodes, edges: [], created_at: new Date('2026-02-01T00:00:00Z'), created_by: 'usr_author' },
  ]);
  expect(await database.query(`select workflow_version from executions`)).toEqual([{ workflow_version: 1 }]);
  // No defaults were left behind: new rows must say their version.
  const defaults = await database.query(
    `select table_name, column_name from information_schema.columns where column_name in ('version', 'workflow_version') and column_default is not null`,
  );
  expect(defaults).toEqual([]);
});
