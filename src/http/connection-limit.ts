import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { admitConnections, type ConnectionAdmission } from '../common/connection-admission';
import { connectionCap, fileDescriptorLimit } from '../common/connection-limits';
import type { AppConfig } from '../config/app-config';
import { DATABASE_POOL_SIZE } from '../database/database';

/** Refusals and evictions are logged at most once per this interval each, with their count. */
const LOG_INTERVAL_MS = 10_000;

const admissions = new WeakMap<Server, ConnectionAdmission>();

/** The admission of a server set up by limitConnections (its cap, its open connections). */
export function connectionAdmissionOf(server: Server): ConnectionAdmission | undefined {
  return admissions.get(server);
}

/**
 * Caps the connections held at once (connectionCap) below the file-descriptor limit, so that a
 * flood of connections cannot take the descriptors of the database pool; at the cap, idle
 * keep-alive connections make room for new ones (admitConnections).
 */
export function limitConnections(server: Server, config: AppConfig, logger: Logger): ConnectionAdmission {
  const cap = connectionCap({
    fileDescriptorLimit: fileDescriptorLimit(),
    databasePoolSize: DATABASE_POOL_SIZE,
    configured: config.httpMaxConnections,
  });
  if (cap.lowered)
    logger.warn(
      { configured: config.httpMaxConnections, maxConnections: cap.maxConnections, fileDescriptorLimit: cap.fileDescriptorLimit },
      'HTTP_MAX_CONNECTIONS is above what the file-descriptor limit allows: lowered',
    );
  const { maxConnections } = cap;
  const admission = admitConnections(server, maxConnections, {
    refused: countedLog((dropped) => logger.warn({ dropped, maxConnections }, 'connection limit reached: new connections closed')),
    evicted: countedLog((closed) =>
      logger.info({ closed, maxConnections }, 'connection limit reached: idle connections closed for new ones'),
    ),
  });
  admissions.set(server, admission);
  return admission;
}

/** A log line written at most every LOG_INTERVAL_MS, with how many times it happened since the last one. */
function countedLog(write: (count: number) => void): () => void {
  let count = 0;
  let lastLogAt = 0;
  return () => {
    count++;
    if (Date.now() - lastLogAt < LOG_INTERVAL_MS) return;
    lastLogAt = Date.now();
    write(count);
    count = 0;
  };
}
