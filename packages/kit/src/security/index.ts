export { classifyAddress, type BlockedReason } from './address-policy.js';
export { outboundFetch, type OutboundFetch, type OutboundFetchLimits } from './outbound-fetch.js';
export {
  OutboundHttp,
  OutboundRequestError,
  type OutboundFailureReason,
  type OutboundHttpOptions,
  type OutboundRequest,
  type OutboundResponse,
  type OutboundStream,
} from './outbound-http.js';
export {
  BlockedAddressError,
  MAX_URL_LENGTH,
  OutboundPolicy,
  systemResolver,
  type ConnectLookup,
  type HostResolver,
  type LookupCallback,
  type OutboundPolicyOptions,
} from './outbound-policy.js';
export { keyIdOf, SecretBox, SecretDecryptionError } from './secret-box.js';
