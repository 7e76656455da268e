import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  url: string;
  /** The data directory as a tar archive, for `fromDump`. */
  dump(): Promise<Blob>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL compiled to WebAssembly (PGlite), served on a loopback port so the application talks
 * to it exactly as it talks to a real server: through adapter-pg. Development and test default only.
 * PGlite is one backend: it runs one transaction at a time, which serialises concurrent
 * transactions instead of interleaving them.
 */
export async function startEmbeddedPostgres(
  /** `fromDump`: starts from a data directory written by `dumpDataDir` (tests copy a migrated one). */
  options: { dataDir?: string; port?: number; maxConnections?: number; fromDump?: Blob } = {},
): Promise<EmbeddedPostgres> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.fromDump ? { loadDataDir: options.fromDump } : {}),
  });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: options.port ?? 0, maxConnections: options.maxConnections ?? 64 });
  keepExtendedQuerySequencesTogether(server);
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    url: `postgresql://postgres@${host}:${port}/postgres?sslmode=disable`,
    dump: () => db.dumpDataDir('none'),
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** First byte of the frontend messages that end an extended-query sequence (Sync) or stand alone (Query, Terminate). */
const SEQUENCE_END = new Set([0x53, 0x51, 0x58]);

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  resolve(bytes: number): void;
  reject(error: unknown): void;
  onData(data: Uint8Array): void;
}

interface QueryQueue {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: PGlite;
  processQueue(): Promise<void>;
  clearTransactionIfNeeded(handlerId: number): Promise<void>;
}

/**
 * pglite-socket 0.2.17 interleaves the messages of concurrent connections one by one. PGlite is a
 * single session, so Parse from one connection followed by Bind from another breaks both ("bind
 * message supplies 3 parameters, but prepared statement requires 6"). Its queue already keeps a
 * connection's messages together inside a transaction; this extends the same rule to an
 * extended-query sequence (Parse .. Sync), which is what every adapter-pg query is.
 */
function keepExtendedQuerySequencesTogether(server: PGLiteSocketServer): void {
  const queue = (server as unknown as { queryQueue: QueryQueue }).queryQueue;
  let midSequenceOf: number | null = null;
  queue.processQueue = async function processQueue(this: QueryQueue) {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const owner = midSequenceOf ?? (this.db.isInTransaction() ? this.lastHandlerId : null);
        const index = owner === null ? 0 : this.queue.findIndex((item) => item.handlerId === owner);
        // The owner's next message is not queued yet: it is sent once its previous one is answered.
        if (index === -1) break;
        const [item] = this.queue.splice(index, 1);
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          midSequenceOf = null;
          item.reject(error);
          continue;
        }
        midSequenceOf = SEQUENCE_END.has(item.message[0]) ? null : item.handlerId;
        this.lastHandlerId = item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };
  const clearTransaction = queue.clearTransactionIfNeeded.bind(queue);
  queue.clearTransactionIfNeeded = async (handlerId: number) => {
    if (midSequenceOf === handlerId) midSequenceOf = null;
    await clearTransaction(handlerId);
    await queue.processQueue();
  };
}
