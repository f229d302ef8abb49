export { classifyDbError, isUniqueViolation } from './errors.js';
export { assembleOnDatabase, closeOrm, initOrm, requestContext, type EntityManager, type NamedMigration, type Orm, type OrmOptions } from './orm.js';
export { PreparedRead, type ReadValue } from './prepared-read.js';
