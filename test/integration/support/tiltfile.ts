/**
 * Reads the calls a Tiltfile makes without Tilt: a tokenizer and expression evaluator for the part
 * of Starlark a declarative Tiltfile uses (string, number, list, dict and tuple literals, `+`,
 * `%` with `%s`, calls and keyword arguments), with the file's top-level CONSTANTS resolved.
 * A call's result is not computed: `sync('a', 'b')` evaluates to { fn: 'sync', args: ['a', 'b'] }.
 * Anything it cannot resolve (a local variable, an attribute) evaluates to an Unresolved marker,
 * so a check against it fails instead of passing on a guess.
 */

export type TiltValue = string | number | boolean | null | TiltValue[] | TiltCall | Unresolved | { [key: string]: TiltValue };
export interface TiltCall {
  fn: string;
  args: TiltValue[];
  kwargs: Record<string, TiltValue>;
}
export class Unresolved {
  constructor(readonly source: string) {}
}

/** A value as text, for string checks and messages: a string as it is, anything else as JSON. */
export function text(value: TiltValue): string {
  if (typeof value === 'string') return value;
  return value instanceof Unresolved ? `<unresolved: ${value.source}>` : JSON.stringify(value);
}

type Token = { kind: 'str' | 'num' | 'name' | 'op'; text: string; value?: string };

const OPERATOR = /^(==|!=|<=|>=|[^\s\w'"])/;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let rest = source;
  while (rest.length > 0) {
    const space = /^(\s+|#[^\n]*)/.exec(rest);
    if (space) {
      rest = rest.slice(space[0].length);
      continue;
    }
    const string = /^('''[\s\S]*?'''|"""[\s\S]*?"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")/.exec(rest);
    if (string) {
      const quote = string[0].startsWith("'''") || string[0].startsWith('"""') ? 3 : 1;
      const body = string[0].slice(quote, -quote).replace(/\\(.)/g, (_, char: string) => ({ n: '\n', t: '\t' })[char] ?? char);
      tokens.push({ kind: 'str', text: string[0], value: body });
      rest = rest.slice(string[0].length);
      continue;
    }
    const word = /^([A-Za-z_]\w*|\d+)/.exec(rest);
    if (word) {
      tokens.push({ kind: /^\d/.test(word[0]) ? 'num' : 'name', text: word[0] });
      rest = rest.slice(word[0].length);
      continue;
    }
    const operator = OPERATOR.exec(rest);
    if (!operator) throw new Error(`Tiltfile: cannot read ${JSON.stringify(rest.slice(0, 20))}`);
    tokens.push({ kind: 'op', text: operator[0] });
    rest = rest.slice(operator[0].length);
  }
  return tokens;
}

function format(template: string, values: TiltValue[]): TiltValue {
  let index = 0;
  const out = template.replace(/%([%s])/g, (_, kind: string) => (kind === '%' ? '%' : text(values[index++]!)));
  if (/%[^%s]/.test(template.replace(/%%/g, ''))) throw new Error(`Tiltfile: only %s is supported in ${template}`);
  return values.some((value) => value instanceof Unresolved) ? new Unresolved(template) : out;
}

class Evaluator {
  private position = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly scope: Map<string, TiltValue>,
  ) {}

  /** One expression from the current position; the position moves past it. */
  expression(): TiltValue {
    let left = this.product();
    while (this.peek('+')) {
      this.position++;
      const right = this.product();
      if (typeof left === 'string' && typeof right === 'string') left = left + right;
      else if (Array.isArray(left) && Array.isArray(right)) left = [...left, ...right];
      else left = new Unresolved('+');
    }
    return left;
  }

  private product(): TiltValue {
    let left = this.postfix();
    while (this.peek('%')) {
      this.position++;
      const right = this.postfix();
      left = typeof left === 'string' ? format(left, Array.isArray(right) ? right : [right]) : new Unresolved('%');
    }
    return left;
  }

  private postfix(): TiltValue {
    const start = this.tokens[this.position];
    // A name called directly (`sync(...)`) is recorded; any other call is not followed.
    let callee = start?.kind === 'name' && this.tokens[this.position + 1]?.text === '(' ? start.text : undefined;
    let value = this.atom();
    for (;;) {
      if (this.peek('(')) {
        const call = this.call(callee ?? '?');
        value = callee === undefined ? new Unresolved('call') : call;
        callee = undefined;
      } else if (this.peek('[') || this.peek('.')) {
        this.position++;
        if (this.tokens[this.position - 1]!.text === '[') {
          this.expression();
          this.expect(']');
        } else this.position++;
        value = new Unresolved('subscript or attribute');
      } else return value;
    }
  }

  private call(fn: string): TiltCall {
    this.expect('(');
    const call: TiltCall = { fn, args: [], kwargs: {} };
    while (!this.peek(')')) {
      const [name, equals] = [this.tokens[this.position], this.tokens[this.position + 1]];
      if (name?.kind === 'name' && equals?.text === '=') {
        this.position += 2;
        call.kwargs[name.text] = this.expression();
      } else call.args.push(this.expression());
      if (!this.peek(')')) this.expect(',');
    }
    this.expect(')');
    return call;
  }

  private atom(): TiltValue {
    const token = this.tokens[this.position++];
    if (!token) throw new Error('Tiltfile: unexpected end');
    if (token.kind === 'str') {
      let text = token.value!;
      while (this.tokens[this.position]?.kind === 'str') text += this.tokens[this.position++]!.value!;
      return text;
    }
    if (token.kind === 'num') return Number(token.text);
    if (token.kind === 'name') {
      const literal: Record<string, TiltValue> = { True: true, False: false, None: null };
      if (token.text in literal) return literal[token.text]!;
      if (this.peek('(')) return null; // the callee's name; postfix() makes the call
      return this.scope.has(token.text) ? this.scope.get(token.text)! : new Unresolved(token.text);
    }
    if (token.text === '[' || token.text === '(') {
      const close = token.text === '[' ? ']' : ')';
      const items: TiltValue[] = [];
      while (!this.peek(close)) {
        items.push(this.expression());
        if (this.tokens[this.position]?.text === 'for') return this.skipComprehension(close);
        if (!this.peek(close)) this.expect(',');
      }
      this.expect(close);
      return items;
    }
    if (token.text === '{') {
      const entries: Record<string, TiltValue> = {};
      while (!this.peek('}')) {
        const key = this.expression();
        this.expect(':');
        entries[text(key)] = this.expression();
        if (!this.peek('}')) this.expect(',');
      }
      this.expect('}');
      return entries;
    }
    throw new Error(`Tiltfile: unexpected ${token.text}`);
  }

  /** The rest of `[x for x in xs]`, not evaluated. */
  private skipComprehension(close: string): Unresolved {
    for (let depth = 0; ; this.position++) {
      const text = this.tokens[this.position]?.text;
      if (text === undefined) throw new Error('Tiltfile: unclosed comprehension');
      if (text === '[' || text === '(' || text === '{') depth++;
      else if (depth === 0 && text === close) break;
      else if (text === ']' || text === ')' || text === '}') depth--;
    }
    this.position++;
    return new Unresolved('comprehension');
  }

  private peek(text: string): boolean {
    const token = this.tokens[this.position];
    return token?.kind === 'op' && token.text === text;
  }

  private expect(text: string): void {
    if (!this.peek(text)) throw new Error(`Tiltfile: expected ${text}, found ${this.tokens[this.position]?.text ?? 'the end'}`);
    this.position++;
  }
}

/** The value of each top-level `UPPER_CASE = expression`, in file order (later ones may use earlier ones). */
export function tiltConstants(source: string): Map<string, TiltValue> {
  const scope = new Map<string, TiltValue>();
  for (const match of source.matchAll(/^([A-Z][A-Z0-9_]*)\s*=(?!=)/gm)) {
    scope.set(match[1]!, new Evaluator(tokenize(source.slice(match.index + match[0].length)), scope).expression());
  }
  return scope;
}

/**
 * Every call to one of `callees` in the body of the top-level function `def <functionName>():`,
 * arguments evaluated with the file's constants.
 */
export function tiltCalls(source: string, functionName: string, callees: string[]): TiltCall[] {
  const start = source.search(new RegExp(`^def ${functionName}\\(\\):`, 'm'));
  if (start < 0) throw new Error(`Tiltfile: no function ${functionName}`);
  const bodyStart = source.indexOf('\n', start) + 1;
  const end = source.slice(bodyStart).search(/^[^\s#]/m);
  const body = source.slice(bodyStart, end < 0 ? undefined : bodyStart + end);
  const scope = tiltConstants(source);
  const calls: TiltCall[] = [];
  for (const match of body.matchAll(new RegExp(`\\b(${callees.join('|')})(?=\\()`, 'g'))) {
    calls.push(new Evaluator(tokenize(body.slice(match.index)), scope).expression() as TiltCall);
  }
  return calls;
}

/** An image build of the Tiltfile, whichever of Tilt's build functions declares it. */
export interface TiltImageBuild {
  ref: string;
  dockerfile: string | null;
  context: string | null;
  /** The Dockerfile's SERVICE build argument. */
  service: string | null;
  /** What Tilt watches for this image: a docker_build's context, a custom_build's deps. */
  watched: string[];
  syncs: { from: string; to: string }[];
  entrypoint: string;
  restartFile: string;
}

export const IMAGE_BUILDERS = ['docker_build', 'docker_build_with_restart', 'custom_build', 'custom_build_with_restart'];

export function imageBuild(call: TiltCall): TiltImageBuild {
  const argument = (index: number, name: string): TiltValue => call.kwargs[name] ?? call.args[index] ?? null;
  const optional = (value: TiltValue) => (value === null ? null : text(value));
  const steps = argument(-1, 'live_update');
  const syncs = (Array.isArray(steps) ? steps : [])
    .filter((step): step is TiltCall => typeof step === 'object' && step !== null && 'fn' in step && step.fn === 'sync')
    .map((step) => ({ from: text(step.args[0] ?? null), to: text(step.args[1] ?? null) }));
  const common = { ref: text(argument(0, 'ref')), syncs, entrypoint: text(argument(-1, 'entrypoint')), restartFile: text(argument(-1, 'restart_file')) };
  if (call.fn.startsWith('docker_build')) {
    const buildArgs = argument(-1, 'build_args');
    const context = argument(1, 'context');
    return {
      ...common,
      context: optional(context),
      watched: [text(context)],
      dockerfile: optional(argument(-1, 'dockerfile')),
      service: buildArgs && typeof buildArgs === 'object' && 'SERVICE' in buildArgs ? text((buildArgs as Record<string, TiltValue>).SERVICE!) : null,
    };
  }
  // custom_build: `docker build -f <Dockerfile> --build-arg SERVICE=<dir> -t $EXPECTED_REF <context>`
  const command = argument(1, 'command');
  const words = typeof command === 'string' ? command.split(/\s+/) : [];
  const after = (flag: string) => words[words.indexOf(flag) + 1] ?? null;
  const deps = argument(2, 'deps');
  return {
    ...common,
    dockerfile: words.includes('build') ? after('-f') : null,
    // The image must be tagged $EXPECTED_REF, Tilt's name for it, right before the context.
    context: after('-t') === '$EXPECTED_REF' && words.indexOf('-t') === words.length - 3 ? words.at(-1)! : null,
    service: words.map((word) => /^SERVICE=(.+)$/.exec(word)?.[1]).find((value) => value !== undefined) ?? null,
    watched: Array.isArray(deps) ? deps.map(text) : [],
  };
}
