export default async function globalTeardown() {
  const drop = (globalThis as Record<string, unknown>).__BFF_TEST_DROP__ as (() => Promise<void>) | undefined;
  await drop?.();
}
