/**
 * Polls `probe` until it answers something truthy, and answers that; past `timeoutMs` it throws,
 * naming `what` it waited for. A predicate (`() => boolean`) resolves to `true`, a probe that finds
 * a row resolves to the row.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
