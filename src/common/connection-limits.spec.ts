import { ASSUMED_FILE_DESCRIPTOR_LIMIT, connectionCap, fileDescriptorLimit, OTHER_DESCRIPTORS } from './connection-limits';

const limits = (openFiles: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max processes             63448                63448                processes ',
    `Max open files            ${openFiles}                files     `,
    'Max locked memory         8388608              8388608              bytes     ',
  ].join('\n');

describe('fileDescriptorLimit', () => {
  it('reads the soft limit of open files', () => {
    expect(fileDescriptorLimit(() => limits('1024                 524288              '))).toBe(1024);
  });

  it('is undefined when unlimited, unreadable or absent', () => {
    expect(fileDescriptorLimit(() => limits('unlimited            unlimited           '))).toBeUndefined();
    expect(
      fileDescriptorLimit(() => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      }),
    ).toBeUndefined();
    expect(fileDescriptorLimit(() => 'nothing of the kind')).toBeUndefined();
  });

  it('reads this process on Linux', () => {
    if (process.platform === 'linux') expect(fileDescriptorLimit()).toBeGreaterThan(0);
  });
});

describe('connectionCap', () => {
  it('is the limit less the database pool and the other descriptors', () => {
    expect(connectionCap({ fileDescriptorLimit: 20_000, databasePoolSize: 10 })).toEqual({
      maxConnections: 20_000 - 10 - OTHER_DESCRIPTORS,
      fileDescriptorLimit: 20_000,
      limitKnown: true,
      lowered: false,
    });
  });

  it('assumes the usual limit where it is unknown', () => {
    expect(connectionCap({ fileDescriptorLimit: undefined, databasePoolSize: 10 }).maxConnections).toBe(
      ASSUMED_FILE_DESCRIPTOR_LIMIT - 10 - OTHER_DESCRIPTORS,
    );
  });

  it('takes a configured cap below the derived one, and lowers one above it', () => {
    expect(connectionCap({ fileDescriptorLimit: 20_000, databasePoolSize: 10, configured: 500 })).toMatchObject({
      maxConnections: 500,
      lowered: false,
    });
    expect(connectionCap({ fileDescriptorLimit: 1024, databasePoolSize: 10, configured: 5_000 })).toMatchObject({
      maxConnections: 1024 - 10 - OTHER_DESCRIPTORS,
      lowered: true,
    });
    // Where the limit cannot be read, the operator's number is all there is.
    expect(connectionCap({ fileDescriptorLimit: undefined, databasePoolSize: 10, configured: 5_000 }).maxConnections).toBe(5_000);
  });

  it('never drops to zero on a tiny limit', () => {
    expect(connectionCap({ fileDescriptorLimit: 64, databasePoolSize: 10 }).maxConnections).toBe(1);
  });
});
