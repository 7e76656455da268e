import pino, { type DestinationStream, type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { currentRequestId } from './request-context';
import { redact, scrubSecretValues } from './redaction';
import { activeTraceIds } from '../tracing/tracing';

/**
 * Structured JSON logs (pino). Every line carries the request id of the request it belongs to
 * (and, when tracing is on, the `traceId` and `spanId` of the active span), and passes through the
 * secret scrubber as its very last step, so that no code path can print a provider secret or token
 * by accident.
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
        // The trace of the active span when tracing is on (undefined at once when it is off).
        const trace = activeTraceIds();
        if (trace) return requestId ? { requestId, ...trace } : trace;
        return requestId ? { requestId } : {};
      },
      hooks: {
        streamWrite: (line) => scrubSecretValues(line),
      },
    },
    destination,
  );
}

/**
 * Where the service writes its logs: JSON lines on stdout, except on a terminal outside production,
 * where pino-pretty (a development dependency) makes them readable. The pretty stream is a plain
 * destination, so it receives the lines after the secret scrubber, like any other destination.
 */
export function stdoutLogDestination(options: {
  isProduction: boolean;
  isTTY?: boolean;
  prettyOutput?: NodeJS.WritableStream;
}): DestinationStream {
  const isTTY = options.isTTY ?? process.stdout.isTTY === true;
  if (!options.isProduction && isTTY) {
    const pretty = loadPinoPretty();
    if (pretty) {
      const destination = options.prettyOutput ?? 1;
      return pretty({
        destination,
        sync: true,
        colorize: !options.prettyOutput,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
      });
    }
  }
  return pino.destination({ sync: false });
}

type PinoPretty = (options: Record<string, unknown>) => DestinationStream;

/** Absent when only production dependencies are installed: then the logs stay JSON. */
function loadPinoPretty(): PinoPretty | undefined {
  try {
    return require('pino-pretty') as PinoPretty;
  } catch {
    return undefined;
  }
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
