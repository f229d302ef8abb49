export { ConfigError, env, loadConfigOrExit, parseAll, parseConfig } from './config.js';
export {
  DomainError,
  ERROR_CODES,
  errorBody,
  httpStatusOf,
  grpcStatusOf,
  isErrorCode,
  type DomainErrorOptions,
  type ErrorBody,
  type ErrorCode,
  type FieldError,
  FieldErrors,
} from './errors.js';
export { requireAccess, requireRole, requireUser, type Actor } from './actor.js';
export { ID_PREFIXES, isId, newId, type IdKind } from './ids.js';
export { createLogger, type Logger, type LoggerSettings } from './logger.js';
export {
  ALL_SCOPES,
  ROLES,
  SCOPES,
  hasScope,
  isRole,
  isScopeGrant,
  roleAtLeast,
  type Role,
  type Scope,
  type ScopeGrant,
} from './access.js';
