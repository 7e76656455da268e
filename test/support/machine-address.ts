import { networkInterfaces } from 'node:os';

/** An IPv4 address of this machine other than loopback: how another computer on the network reaches it. */
export function nonLoopbackIPv4(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
}
