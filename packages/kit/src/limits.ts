/**
 * Bounds that more than one place holds a request to: the service that decides, and the gateway's
 * schema (which spares the service a body it would refuse) or another service that forwards to it.
 */

/** A chat message: what a user, an agent node or an MCP call says in one turn (decisions §6). */
export const CHAT_MESSAGE_MAX = 32_000;

/** The comment of a decision: on a tool call's approval (§12.10) or an approval node (§13). */
export const DECISION_COMMENT_MAX = 2_000;

/** An end user of the tenant's own application, named in its own words (decisions §14). */
export const END_USER_ID_MAX = 128;

/** Items one call adds to a dataset (decisions §16): a batch is stored whole or not at all. */
export const DATASET_ITEMS_PER_CALL_MAX = 1_000;

/** A dataset item's expected answer, which scorers compare an agent's output with: as long as a message. */
export const DATASET_EXPECTED_MAX = CHAT_MESSAGE_MAX;

/**
 * The largest document original, uploaded or fetched (decisions §17), unless DOCUMENT_MAX_BYTES
 * says otherwise: the gateway cuts an upload there, agent-memory refuses one and a page past it.
 */
export const DOCUMENT_MAX_BYTES_DEFAULT = 20 * 1_048_576;

/** A bound as people read it in messages and documentation: 32,000. */
export function characters(count: number): string {
  return count.toLocaleString('en');
}
