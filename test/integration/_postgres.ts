/**
 * A throwaway PostgreSQL cluster for tests: initdb into a temp folder, pg_ctl on a free
 * loopback port, one fresh database per `database()` call, everything removed by `stop()`.
 * PostgreSQL refuses to run as root, so as root the cluster runs as user nobody.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestPostgres {
  /** A connection URL of the cluster's `postgres` database. */
  readonly url: string;
  /** Creates an empty database and returns its URL. */
  database(name: string): Promise<string>;
  /** Stops the server (immediate shutdown: connections drop) and keeps its data for `resume`. */
  pause(): void;
  /** Starts the paused server again on the same port. */
  resume(): void;
  stop(): Promise<void>;
}

/** Whether PostgreSQL's server programs are installed (.ci/run installs them; a bare machine may lack them). */
export function postgresInstalled(): boolean {
  try {
    postgresBin();
    return true;
  } catch {
    return false;
  }
}

/** The newest installed PostgreSQL's bin folder (Debian: /usr/lib/postgresql/<major>/bin). */
export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root) ? fs.readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const major of majors) {
    const bin = path.join(root, major, 'bin');
    if (fs.existsSync(path.join(bin, 'initdb'))) return bin;
  }
  throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run does it)');
}

/** A loopback port free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Clusters not stopped yet: stopped when this process exits, so a failed test leaves none behind. */
const running = new Set<() => void>();
process.on('exit', () => { for (const stop of running) stop(); });

/** Starts a cluster (under a second) and returns its handle. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]): void => {
    const cmd = asRoot ? 'runuser' : path.join(bin, tool);
    const argv = asRoot ? ['-u', 'nobody', '--', path.join(bin, tool), ...args] : args;
    execFileSync(cmd, argv, { stdio: 'pipe', cwd: dir });
  };
  if (asRoot) {
    fs.chmodSync(dir, 0o755);
    execFileSync('chown', ['nobody', dir]);
  }
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'gsf', '--no-sync']);
  const port = await freePort();
  const start = (): void => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
  start();
  let up = true;
  const url = (db: string): string => `postgres://gsf@127.0.0.1:${port}/${db}`;
  const stopNow = (): void => {
    running.delete(stopNow);
    try {
      if (up) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  running.add(stopNow);
  let stopped = false;
  return {
    url: url('postgres'),
    async database(name: string): Promise<string> {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    pause(): void {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      up = false;
    },
    resume(): void {
      start();
      up = true;
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      stopNow();
    },
  };
}

/** A simple-query message `COMMIT` of PostgreSQL's protocol ('Q', length, text, NUL). */
const COMMIT_QUERY = Buffer.concat([Buffer.from('Q\0\0\0\x0b', 'latin1'), Buffer.from('COMMIT\0')]);

/**
 * A TCP proxy to PostgreSQL. `blackhole()` makes the connections open now silent: their
 * PostgreSQL side is closed, gsf's side is neither closed nor reset (a crashed host, a firewall
 * that drops); new connections work. `loseNextCommitAnswer()`: the next COMMIT reaches the
 * database, and gsf's connection is closed before its answer (`answered` resolves once the
 * database has answered it: it was applied). `cut()` closes everything.
 */
export async function postgresProxy(target: URL): Promise<{ port: number; blackhole(): void; loseNextCommitAnswer(): Promise<void>; cut(): void; close(): void }> {
  const pairs: Array<[net.Socket, net.Socket]> = [];
  const silent: net.Socket[] = [];
  let onCommit: ((client: net.Socket, upstream: net.Socket) => void) | null = null;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (onCommit !== null && chunk.includes(COMMIT_QUERY)) {
        const act = onCommit;
        onCommit = null;
        act(client, upstream);
      }
    });
    upstream.pipe(client);
    pairs.push([client, upstream]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole: () => {
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.destroy();
        client.on('data', () => undefined); // read and drop: no answer ever comes
        silent.push(client);
      }
    },
    loseNextCommitAnswer: () => new Promise<void>((answered) => {
      onCommit = (client, upstream) => {
        upstream.unpipe(client);
        client.destroy();
        upstream.once('data', () => {
          upstream.destroy();
          answered();
        });
        upstream.resume(); // unpiped, it stopped flowing
      };
    }),
    cut: () => {
      for (const c of silent.splice(0)) c.destroy();
      for (const [a, b] of pairs.splice(0)) { a.destroy(); b.destroy(); }
    },
    close: () => {
      for (const c of silent.splice(0)) c.destroy();
      for (const [a, b] of pairs.splice(0)) { a.destroy(); b.destroy(); }
      server.close();
    },
  };
}
