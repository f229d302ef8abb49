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
export { requireAccess, requireAccessFor, requireRole, requireUser, type Actor } from './actor.js';
export { DEFAULT_PAGE_SIZE, encodeCursor, MAX_PAGE_SIZE, parseCursorPage, parsePage, type Cursor, type CursorPage, type Page } from './paging.js';
export { requireVersionNumber } from './versions.js';
export { ID_PREFIXES, isId, newId, type IdKind } from './ids.js';
export { isLeasedTrigger, LEASED_TRIGGERS, RUN_STATUSES, RUN_STEP_TYPES, RUN_TRIGGERS, type LeasedTrigger, type RunStatus, type RunStepType, type RunTrigger } from './runs.js';
export { settlesWithin, timedSignal, TimeoutError, untilAborted, withTimeout, type TimedSignal } from './timeout.js';
export { systemClock, type Clock } from './clock.js';
export { backoffDelay, type RetryBackoff } from './backoff.js';
export { citationBody } from './citations.js';
export { characters, CHAT_MESSAGE_MAX, DATASET_EXPECTED_MAX, DATASET_ITEMS_PER_CALL_MAX, DECISION_COMMENT_MAX, DOCUMENT_MAX_BYTES_DEFAULT, END_USER_ID_MAX } from './limits.js';
export { freePort } from './free-port.js';
export { activeTraceId, createLogger, type Logger, type LoggerSettings } from './logger.js';
export { httpServerTelemetry, type ServedReply, type ServedRequest } from './telemetry/http-server.js';
export { withoutSocketHeaders, type InProcessHttp, type InProcessHttpAnswer, type InProcessHttpRequest } from './in-process-http.js';
export {
  ACCESS,
  ALL_SCOPES,
  API_KEY_SECRET_PREFIX,
  GRANTABLE_ROLES,
  isGrantableRole,
  type AccessRule,
  type GrantableRole,
  ROLES,
  SCOPES,
  hasScope,
  isRole,
  isScopeGrant,
  roleAtLeast,
  weakerRole,
  type Role,
  type Scope,
  type ScopeGrant,
} from './access.js';
export { drainFrom, drainSettings, IN_PROCESS_DRAIN, loadDrain, readinessPropagated, type Drain } from './drain.js';
export { HttpDrain } from './http-drain.js';
