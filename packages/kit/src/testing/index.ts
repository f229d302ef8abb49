export {
  createTestDatabase,
  databaseFixture,
  DEFAULT_TEST_DATABASE_URL,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database.js';
export { freePort } from '../free-port.js';
export { deleteNatsStream, startTestNatsServer, type TestNatsServer } from './nats-server.js';
export { expectError } from './expect-error.js';
export { migratedSchemaDrift, schemaDrift } from './schema.js';
export { spawnChildService, type ChildService } from './child-service.js';
export { startReceiver, type Answer, type Answerer, type ReceivedRequest, type Receiver, type RequestMatch, type WaitOptions } from './receiver.js';
export { ManualClock } from './manual-clock.js';
export { seededRandom } from './seeded-random.js';
