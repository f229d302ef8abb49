import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt cost: N = 2^logN, block size r, parallelism p; `keyLength` and `saltLength` in bytes. */
export interface ScryptParams {
  logN: number;
  r: number;
  p: number;
  keyLength: number;
  saltLength: number;
}

/** About 50 ms and 32 MiB per hash on a current server core (OWASP's scrypt floor is N=2^17/r=8 or equivalent). */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { logN: 15, r: 8, p: 1, keyLength: 32, saltLength: 16 };

const PHC_PATTERN = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * Password hashes as PHC strings, `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (unpadded base64): the
 * parameters travel with each hash, so raising the cost later leaves old hashes verifiable and
 * `needsRehash` tells when to upgrade one (at the next successful login).
 */
export class PasswordHasher {
  private readonly params: ScryptParams;
  private dummy: Promise<string> | undefined;

  constructor(params: ScryptParams = DEFAULT_SCRYPT_PARAMS) {
    this.params = params;
  }

  async hash(password: string): Promise<string> {
    const { logN, r, p, keyLength, saltLength } = this.params;
    const salt = randomBytes(saltLength);
    const key = await derive(password, salt, keyLength, { N: 2 ** logN, r, p });
    return `$scrypt$ln=${logN},r=${r},p=${p}$${encode(salt)}$${encode(key)}`;
  }

  /** False for a wrong password and for a stored value that is not a hash this class made. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parse(stored);
    if (!parsed) return false;
    const key = await derive(password, parsed.salt, parsed.key.length, { N: 2 ** parsed.logN, r: parsed.r, p: parsed.p });
    return timingSafeEqual(key, parsed.key);
  }

  /**
   * Spends the time of one verification and answers false: what a login for an unknown e-mail does,
   * so response times do not tell which e-mails have accounts.
   */
  async verifyNothing(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(16).toString('hex'));
    await this.verify(password, await this.dummy);
    return false;
  }

  needsRehash(stored: string): boolean {
    const parsed = parse(stored);
    const { logN, r, p, keyLength } = this.params;
    return !parsed || parsed.logN !== logN || parsed.r !== r || parsed.p !== p || parsed.key.length !== keyLength;
  }
}

interface ParsedHash {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parse(stored: string): ParsedHash | undefined {
  const match = PHC_PATTERN.exec(stored);
  if (!match) return undefined;
  const [, logN, r, p, salt, key] = match as unknown as [string, string, string, string, string, string];
  const parsed = { logN: Number(logN), r: Number(r), p: Number(p), salt: decode(salt), key: decode(key) };
  // Bounds keep a tampered row from turning a login into a memory or CPU bomb.
  if (parsed.logN < 10 || parsed.logN > 22 || parsed.r < 1 || parsed.r > 32 || parsed.p < 1 || parsed.p > 16) return undefined;
  if (parsed.key.length < 16 || parsed.salt.length < 8) return undefined;
  return parsed;
}

function derive(password: string, salt: Buffer, keyLength: number, options: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>>): Promise<Buffer> {
  // scrypt needs 128·N·r·p bytes; Node's default cap (32 MiB) is exactly the default cost, so allow headroom.
  const maxmem = 256 * options.N * options.r * options.p;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function encode(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

function decode(text: string): Buffer {
  return Buffer.from(text, 'base64');
}
