import { randomBytes, randomInt } from 'node:crypto';

/** Random identifiers of sandbox objects (references, matricules, card numbers). */

export function randomDigits(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String(randomInt(0, 10));
  return out;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
