import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What admission knows of one open connection. */
interface OpenConnection {
  /** Requests received and not yet answered to their end (a live stream stays in flight while it lasts). */
  inFlight: number;
  /** `socket.bytesRead` when its last answer ended: more since then means its next request is arriving. */
  bytesReadWhenIdle: number;
}

export interface ConnectionAdmission {
  /** Connections held at once. */
  readonly cap: number;
  /** Connections admitted and not yet closed. */
  open(): number;
}

export interface AdmissionEvents {
  /** A newcomer closed at once, unanswered: every open connection was busy. */
  refused(): void;
  /** An idle keep-alive connection closed to admit a newcomer. */
  evicted(): void;
}

/**
 * Holds at most `cap` connections at once. At the cap, a newcomer is admitted by closing the
 * connection idle the longest: a keep-alive connection between two requests (its last answer
 * ended and nothing of the next has arrived), so that a client holding idle connections keeps no
 * one out. Only a connection doing work is never closed for another: one receiving its request
 * (its first, or the next on a kept connection), one whose answer is being written, a live stream.
 * When every connection is busy the newcomer is closed at once, unanswered (stalled requests then
 * time out within HTTP_TIMEOUTS).
 *
 * It replaces node's `server.maxConnections`, which closes a newcomer before any JavaScript sees
 * it and so could not make room: one client's idle connections kept everyone else out until its
 * keep-alive timeout, and for good if it sent one request per connection now and then.
 */
export function admitConnections(server: Server, cap: number, events: AdmissionEvents): ConnectionAdmission {
  const open = new Map<Socket, OpenConnection>();
  /** The idle connections, the longest idle first (a Set iterates in insertion order). */
  const idle = new Set<Socket>();

  /** Closes the connection idle the longest; false when none is. */
  const evictIdle = (): boolean => {
    for (const socket of idle) {
      idle.delete(socket);
      const connection = open.get(socket);
      // Bytes since its last answer: its next request is arriving (in flight, though node has not
      // emitted it yet). It joins the idle ones again when that request is answered.
      if (!connection || socket.destroyed || socket.bytesRead > connection.bytesReadWhenIdle) continue;
      open.delete(socket);
      socket.destroy();
      events.evicted();
      return true;
    }
    return false;
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= cap && !evictIdle()) {
      events.refused();
      socket.destroy();
      return;
    }
    // Not idle yet: its first request is on its way (headersTimeout bounds how long it may take).
    open.set(socket, { inFlight: 0, bytesReadWhenIdle: 0 });
    socket.once('close', () => {
      open.delete(socket);
      idle.delete(socket);
    });
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const connection = open.get(socket);
    if (!connection) return;
    connection.inFlight++;
    idle.delete(socket);
    const answered = () => {
      connection.inFlight--;
      if (connection.inFlight > 0 || socket.destroyed || !open.has(socket)) return;
      connection.bytesReadWhenIdle = socket.bytesRead;
      idle.add(socket);
    };
    // 'close': the answer ended, or the connection did. An answer given before the body arrived
    // (a 401 decided on the headers): node reads the rest and drops it, so the request ends after.
    response.once('close', () => (request.complete ? answered() : request.once('end', answered)));
  });

  return { cap, open: () => open.size };
}
