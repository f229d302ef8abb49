import { seededRandom } from '@agent-platform/kit/testing';
import { describe, expect, it } from 'vitest';
import { collapseSpace } from './document.js';

/** Every kind of white space `\s` matches, beside letters and a lone space. */
const ALPHABET = ['a', 'é', '東', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2003', '\u2028', '\u2029', '\u202f', '\u3000', '\ufeff'];

describe('collapseSpace', () => {
  it('turns every run of white space into one space and trims, as /\\s+/ → " " does', () => {
    const next = seededRandom(43);
    for (let round = 0; round < 2_000; round += 1) {
      const text = Array.from({ length: Math.floor(next() * 40) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
      expect(collapseSpace(text), JSON.stringify(text)).toBe(text.replace(/\s+/g, ' ').trim());
    }
  });

  it('leaves single spaces between words as they are', () => {
    expect(collapseSpace(' Refunds  are\taccepted\n\nwithin 30\u00a0days. ')).toBe('Refunds are accepted within 30 days.');
  });
});
