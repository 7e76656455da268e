import { Writable } from 'node:stream';
import type { DestinationStream } from 'pino';

/** A pino destination that keeps every line, to assert on what the service logs. */
export class LogCapture {
  readonly lines: string[] = [];
  readonly destination: DestinationStream = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });

  get text(): string {
    return this.lines.join('\n');
  }

  entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
