export {
  createTestDatabase,
  databaseFixture,
  DEFAULT_TEST_DATABASE_URL,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database.js';
