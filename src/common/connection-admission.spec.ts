import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { admitConnections, type ConnectionAdmission } from './connection-admission';

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** A raw client connection: what it received, and whether the server closed it. */
interface Client {
  socket: Socket;
  received: string;
  closed: boolean;
}

describe('admitConnections', () => {
  const CAP = 3;
  let server: Server;
  let port: number;
  let admission: ConnectionAdmission;
  const events = { refused: 0, evicted: 0 };
  /** Answers held back: a request to /hold is answered when the test says. */
  const held: ServerResponse[] = [];
  const clients: Client[] = [];

  beforeEach(async () => {
    events.refused = events.evicted = 0;
    server = createServer((request, response) => {
      if (request.url === '/hold') return void held.push(response);
      response.end('ok');
    });
    admission = admitConnections(server, CAP, { refused: () => events.refused++, evicted: () => events.evicted++ });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.socket.destroy();
    for (const response of held.splice(0)) response.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  async function open(firstRequest?: string): Promise<Client> {
    const socket = connect(port, '127.0.0.1');
    const client: Client = { socket, received: '', closed: false };
    clients.push(client);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (client.received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => (client.closed = true));
    await new Promise((resolve) => socket.once('connect', resolve));
    if (firstRequest) socket.write(firstRequest);
    await settle();
    return client;
  }
  const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

  it('at the cap, admits a newcomer by closing the connection idle the longest', async () => {
    const idle = [await open(request('/')), await open(request('/')), await open(request('/'))];
    expect(idle.map((c) => c.received.startsWith('HTTP/1.1 200'))).toEqual([true, true, true]);
    expect(admission.open()).toBe(CAP);
    const newcomer = await open(request('/'));
    expect(newcomer.received).toMatch(/^HTTP\/1\.1 200/);
    expect(idle.map((c) => c.closed)).toEqual([true, false, false]);
    // The second idle one answers again: now the third is the one idle the longest.
    idle[1].socket.write(request('/'));
    await settle();
    await open(request('/'));
    expect(idle.map((c) => c.closed)).toEqual([true, false, true]);
    expect([events.evicted, events.refused, admission.open()]).toEqual([2, 0, CAP]);
  });

  it('never closes a busy connection: one being answered, one whose first or next request is arriving', async () => {
    const answering = await open(request('/hold'));
    const arriving = await open('GET / HTTP/1.1\r\nHost: x\r\n');
    const nextArriving = await open(request('/'));
    nextArriving.socket.write('GET / HTTP/1.1\r\n');
    await settle();
    const refused = await open(request('/'));
    expect([refused.closed, refused.received]).toEqual([true, '']);
    expect([answering, arriving, nextArriving].map((c) => c.closed)).toEqual([false, false, false]);
    expect([events.evicted, events.refused]).toEqual([0, 1]);

    // Its answer ended, the held connection is idle: the next newcomer takes its place.
    held.shift()!.end('done');
    await settle();
    const admitted = await open(request('/'));
    expect(admitted.received).toMatch(/^HTTP\/1\.1 200/);
    expect([answering.closed, arriving.closed, nextArriving.closed]).toEqual([true, false, false]);
  });

  it('forgets a connection its client closed: its place is free at once', async () => {
    const first = await open(request('/hold'));
    await open(request('/hold'));
    await open(request('/hold'));
    first.socket.destroy();
    await settle();
    expect(admission.open()).toBe(CAP - 1);
    const newcomer = await open(request('/'));
    expect(newcomer.received).toMatch(/^HTTP\/1\.1 200/);
    expect([events.evicted, events.refused]).toEqual([0, 0]);
  });
});
