import type { NamedMigration, Orm } from '../db/orm.js';
import { createTestDatabase } from './database.js';

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: 'YES' | 'NO';
}

// Type families that read and write the same values; the width of a varchar is not drift.
const DATABASE_FAMILIES: Record<string, string> = {
  text: 'text',
  'character varying': 'text',
  'timestamp with time zone': 'timestamptz',
  json: 'json',
  jsonb: 'jsonb',
  integer: 'integer',
  bigint: 'bigint',
  smallint: 'integer',
  boolean: 'boolean',
  ARRAY: 'array',
  real: 'float',
  'double precision': 'float',
  bytea: 'bytea',
};

function entityFamily(columnType: string): string {
  const type = columnType.toLowerCase();
  if (type.endsWith('[]')) return 'array';
  if (type.startsWith('varchar') || type === 'text') return 'text';
  if (type.startsWith('timestamptz') || type.startsWith('timestamp with time zone')) return 'timestamptz';
  if (type === 'int' || type === 'int4' || type === 'integer' || type === 'smallint') return 'integer';
  if (type === 'int8' || type === 'bigint' || type === 'bigserial') return 'bigint';
  if (type === 'bool' || type === 'boolean') return 'boolean';
  if (type === 'real' || type.startsWith('double') || type === 'float4' || type === 'float8') return 'float';
  return type;
}

/**
 * Where the migrated schema and the MikroORM entities disagree: a mapped column the database
 * lacks, a column no entity maps, a different type family or nullability. Empty when they agree.
 * Stricter than it looks useful to be on purpose: an unmapped column is how a field silently stops
 * being read. (MikroORM's own schema diff also wants indexes, foreign keys and defaults declared on
 * the entities, which here live in the migrations alone.)
 */
export async function schemaDrift(orm: Orm, options: { ignoreTables?: readonly string[] } = {}): Promise<string[]> {
  const rows = await orm.em
    .getConnection()
    .execute<ColumnRow[]>(
      `select table_name, column_name, data_type, is_nullable from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position`,
    );
  const columns = new Map<string, Map<string, ColumnRow>>();
  for (const row of rows) {
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
    columns.get(row.table_name)!.set(row.column_name, row);
  }
  const ignored = new Set(['mikro_orm_migrations', ...(options.ignoreTables ?? [])]);
  const problems: string[] = [];
  const mappedTables = new Set<string>();

  for (const meta of orm.getMetadata().getAll().values()) {
    if (meta.embeddable || meta.virtual) continue;
    mappedTables.add(meta.tableName);
    const table = columns.get(meta.tableName);
    if (!table) {
      problems.push(`${meta.tableName}: table is mapped by ${meta.className} but not in the database`);
      continue;
    }
    const mapped = new Set<string>();
    for (const prop of meta.props) {
      if (prop.persist === false) continue;
      prop.fieldNames.forEach((field, index) => {
        mapped.add(field);
        const column = table.get(field);
        if (!column) {
          problems.push(`${meta.tableName}.${field}: mapped by ${meta.className}.${prop.name} but not in the database`);
          return;
        }
        const expected = entityFamily(prop.columnTypes[index] ?? '');
        const actual = DATABASE_FAMILIES[column.data_type] ?? column.data_type;
        if (expected !== actual) problems.push(`${meta.tableName}.${field}: ${meta.className}.${prop.name} maps it as ${expected}, the database has ${actual}`);
        const nullable = prop.nullable === true;
        if (nullable !== (column.is_nullable === 'YES') && !prop.primary) {
          problems.push(`${meta.tableName}.${field}: ${nullable ? 'nullable' : 'not nullable'} in ${meta.className}.${prop.name}, ${nullable ? 'not nullable' : 'nullable'} in the database`);
        }
      });
    }
    for (const name of table.keys()) if (!mapped.has(name)) problems.push(`${meta.tableName}.${name}: in the database but mapped by no property of ${meta.className}`);
  }
  for (const table of columns.keys()) {
    if (!mappedTables.has(table) && !ignored.has(table)) problems.push(`${table}: in the database but mapped by no entity`);
  }
  return problems;
}

/**
 * `schemaDrift` of a fresh database of the service: migrated (through the template), opened
 * with its entities, compared, then dropped. What every service's schema test runs.
 */
export async function migratedSchemaDrift(options: { name: string; migrations: readonly NamedMigration[]; open: (url: string) => Promise<Orm> }): Promise<string[]> {
  const database = await createTestDatabase({ name: options.name, migrations: options.migrations, migrate: (url) => options.open(url).then((orm) => orm.close()) });
  const orm = await options.open(database.url);
  try {
    return await schemaDrift(orm);
  } finally {
    await orm.close();
    await database.drop();
  }
}
