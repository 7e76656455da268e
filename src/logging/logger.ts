import pino, { type DestinationStream, type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { currentRequestId } from './request-context';
import { redact, scrubSecretValues } from './redaction';

/**
 * Structured JSON logs (pino). Every line carries the request id of the request it belongs to,
 * and passes through the secret scrubber as its very last step, so that no code path can print a
 * provider secret or token by accident.
 */
export function createLogger(level: string, destination: DestinationStream = pino.destination({ sync: false })): Logger {
  return pino(
    {
      level,
      base: { service: 'payments-bff' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
      hooks: {
        streamWrite: (line) => scrubSecretValues(line),
      },
    },
    destination,
  );
}

/** Lets Nest's own messages (bootstrap, route mapping, uncaught errors) go through the same logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, stringify(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, stringify(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, stringify(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, stringify(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, stringify(message));
  }
  fatal(message: unknown, context?: string) {
    this.logger.fatal({ context }, stringify(message));
  }
}

function stringify(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return message.message;
  return JSON.stringify(redact(message));
}
