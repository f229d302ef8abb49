export { classifyDbError, isUniqueViolation } from './errors.js';
export { assembleOnDatabase, closeOrm, initOrm, requestContext, type EntityManager, type NamedMigration, type Orm, type OrmOptions } from './orm.js';
export { PgNotifications } from './notifications.js';
export { PreparedStatement, type StatementValue } from './prepared-statement.js';
