/**
 * The longest prefix of `text` that takes at most `maxBytes` in UTF-8, never cutting a character
 * in two. Linear: one encoding of at most `maxBytes` characters, whatever the text's length.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  // maxBytes characters take at least maxBytes bytes: the kept prefix lies within them.
  const head = Buffer.from(text.slice(0, maxBytes), 'utf8');
  if (text.length <= maxBytes && head.length <= maxBytes) return text;
  let end = Math.min(maxBytes, head.length);
  // Back off to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && end < head.length && (head[end] & 0xc0) === 0x80) end--;
  return head.subarray(0, end).toString('utf8');
}
