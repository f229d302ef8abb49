import { fieldPath, onlyKeys, readString } from '../workflows/graph-fields.js';
import { passInput, type NodeKind } from './node-kind.js';

export interface WebhookConfig {
  /** '' when none was given; otherwise begins with `/`. */
  path: string;
}

const MAX_WEBHOOK_PATH = 200;
// RFC 3986 path characters (unreserved, sub-delims, ':' and '@', percent-escapes) in '/' segments.
const WEBHOOK_PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)+$/;

export const webhookNode: NodeKind<WebhookConfig, false> = {
  summary: 'trigger: an inbound request to `/hooks/<workflow>/<path>`',
  configHelp: '{path?: "/…"}',
  trigger: true,
  check(config, ctx) {
    onlyKeys(config, ['path'], ctx, "a webhook node's config");
    const path = readString(config, 'path', ctx, { required: false, max: MAX_WEBHOOK_PATH }) ?? '';
    const problem = path === '' ? undefined : webhookPathProblem(path);
    if (problem) ctx.errors.add(fieldPath(ctx, 'path'), problem);
    return { path };
  },
  hasSideEffects: () => false,
  behaviour: passInput,
};

function webhookPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must begin with /';
  if (!WEBHOOK_PATH.test(path)) return "must hold only URL path characters: letters, digits, / - . _ ~ ! $ & ' ( ) * + , ; = : @ and %XX escapes";
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'must not have . or .. segments';
  return undefined;
}
