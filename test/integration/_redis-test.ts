/**
 * ava's `test` for the tests that need `redis-server` (and, for some, PostgreSQL): Debian's
 * packages, which .ci/run installs. On a machine without them each such test is reported as
 * skipped, saying why, instead of failing: `npm test` passes with only Node, a C++ compiler,
 * CMake and Ninja, as the README promises.
 */
import ava, { type Implementation, type TestFn } from 'ava';
import { spawnSync } from 'node:child_process';
import { postgresInstalled } from './_postgres.ts';

/** Whether `redis-server` can be started here. */
export const redisInstalled = spawnSync('redis-server', ['--version']).error === undefined;

function skipping(why: string): TestFn {
  const note = ` [skipped: ${why}]`;
  const skipped = Object.assign(
    (title: string, impl: Implementation<[]>) => ava.skip(title + note, impl),
    {
      serial: (title: string, impl: Implementation<[]>) => ava.serial.skip(title + note, impl),
      // Hooks would start the servers: with every test skipped there is nothing to set up.
      before: () => undefined,
      after: { always: () => undefined },
    },
  );
  return skipped as unknown as TestFn;
}

const NO_REDIS = 'redis-server is not installed; apt-get install redis-server, as .ci/run does';

/** Tests that start Redis. */
export const test: TestFn = redisInstalled ? ava : skipping(NO_REDIS);

/** Tests that start Redis and PostgreSQL. */
export const testWithPostgres: TestFn = !redisInstalled ? skipping(NO_REDIS)
  : postgresInstalled() ? ava : skipping('PostgreSQL is not installed; apt-get install postgresql, as .ci/run does');
