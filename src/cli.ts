/**
 * The `gsf` command: `gsf start [--manifest PATH] [--watch]`, `gsf authenticator [--manifest PATH]`, `gsf bench [NAME]`.
 */
import fs from 'node:fs';
// The server (and its native core) loads only for `start`: the authenticator runs without them.
import type { GsfServer } from './server.ts';
import { describeError } from './errors.ts';
import { loadModule } from './load-module.ts';

const USAGE = `usage: gsf <command> [options]

commands:
  start [--manifest PATH] [--watch]
                            start the game server (default manifest: ./MANIFEST.json);
                            --watch reloads plugins when their files change (development);
                            SIGHUP reloads every plugin whose source changed
  authenticator [--manifest PATH]
                            start the authenticator agent (default: ./authenticator.MANIFEST.json)
  bench [NAME…] [--OPTION…] run the benchmarks in bench/ (all, or those named); options:
                            events --threads=N --modes=trivial,chained,cpu --rounds=N,
                            sessions --io-threads=N[,M…] --light --peak-only
  objects types [--manifest PATH] [--out FILE] [--check]
                            write the TypeScript declarations of the object types
`;

/** The native core (loaded with the server). */
const nativeModule = (): Promise<typeof import('./native.ts')> => loadModule(import.meta.url, './native.ts');

function option(args: string[], name: string): string | undefined {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const arg = args[i]!;
  if (arg.includes('=')) return arg.slice(arg.indexOf('=') + 1);
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

/**
 * Refuses what `command` does not take (exit 2, with the usage): a mistyped option would
 * otherwise be ignored and the server start with its defaults (`--manfest x.json`).
 */
function onlyOptions(command: string, args: string[], withValue: readonly string[], flags: readonly string[]): void {
  helpAsked(args, USAGE);
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    let problem: string | null = null;
    // Given twice (a script adding its own --manifest to a command that has one), which was meant cannot be told.
    if (seen.has(name)) problem = `${name} is given more than once`;
    else if (withValue.includes(name)) {
      if (arg.includes('=')) {
        if (arg.endsWith('=')) problem = `${name} needs a value`;
      } else if (args[i + 1] === undefined || args[i + 1] === '' || args[i + 1]!.startsWith('--')) {
        // An empty argument (`--manifest "$UNSET"`) is no value either.
        problem = `${name} needs a value`;
      } else {
        i++; // its value
      }
    } else if (flags.includes(name)) {
      if (arg.includes('=')) problem = `${name} takes no value`;
    } else {
      const known = [...withValue.map((o) => `${o} <value>`), ...flags].join(', ');
      problem = `unknown ${arg.startsWith('-') ? 'option' : 'argument'} '${arg}' (${command} takes ${known})`;
    }
    seen.add(name);
    if (problem !== null) {
      process.stderr.write(`gsf ${command}: ${problem}\n${USAGE}`);
      process.exit(2);
    }
  }
}

/** `--help` or `-h` among a command's arguments: `usage` on standard output, exit 0 (as `gsf --help`). */
function helpAsked(args: string[], usage: string): void {
  if (!args.includes('--help') && !args.includes('-h')) return;
  process.stdout.write(usage);
  process.exit(0);
}

async function start(args: string[]): Promise<void> {
  onlyOptions('start', args, ['--manifest'], ['--watch']);
  const manifestPath = option(args, '--manifest') ?? 'MANIFEST.json';
  // One handler per signal for the whole run, never removed: a signal that arrives while a
  // handler is swapped for another is lost (libuv hands it to the handler that was registered).
  // During the start it is kept and acted on once the server is up: stopping then releases what
  // the start took (its ports, its cluster presence) instead of dying half-started.
  let early: string | null = null;
  let onSignal = (signal: string): void => {
    if (early !== null) {
      // A second one: at once (a start held by a plugin's onStart that never settles ends here).
      process.stderr.write(`gsf: ${signal} again during the start: exiting at once\n`);
      native().then((n) => n.exitNow(1), () => process.exit(1));
      return;
    }
    early = signal;
    // Said at once: the stop waits for the start, which a slow onStart hook may hold.
    process.stderr.write(`gsf: ${signal} during the start: the server stops once it is up (a second signal exits at once)\n`);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  // A SIGHUP asks for a reload: during the start (whose default action would end the process) it
  // is kept, and the reload runs once the server is up, where the server's own handler takes over.
  let hangupDuringStart = false;
  const earlyHangup = (): void => { hangupDuringStart = true; };
  process.on('SIGHUP', earlyHangup);
  let server: GsfServer;
  try {
    const { startServer } = await loadModule<typeof import('./server.ts')>(import.meta.url, './server.ts');
    server = await startServer({ manifestPath });
  } catch (err) {
    process.stderr.write(`gsf: ${err instanceof TypeError ? `TypeError: ${err.message}` : describeError(err)}\n`);
    process.exit(1);
  }
  process.off('SIGHUP', earlyHangup);
  if (hangupDuringStart && early === null) {
    server.thread.log.info('SIGHUP during the start: reloading the plugins now');
    void server.reloadInBackground('SIGHUP');
  }
  const stopWatching = args.includes('--watch')
    ? (await loadModule<typeof import('./plugins/reload-watch.ts')>(import.meta.url, './plugins/reload-watch.ts')).watchPlugins(server, server.thread.log)
    : () => undefined;
  // An event thread abandoned in native code would hold Node's exit forever (it joins threads),
  // so every exit of a started server checks for one.
  const exit = async (code: number): Promise<never> => {
    const { native } = await nativeModule();
    if ((native.counterValue('engine', 'event_threads_abandoned') ?? 0) > 0) native.exitNow(code);
    process.exit(code);
  };
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.stderr.write(`gsf: ${signal} again, exiting without draining\n`);
      void nativeModule().then(({ native }) => {
        // What it drops is said in the server's log and counted, as a stop past its drain limit does.
        const left = native.queueStats();
        server.thread.log.error(`${signal} again: exiting without draining; ${left.waiting} queued and ${left.outstanding} running event(s) are dropped`);
        native.counterIncrease('engine', 'events_dropped_at_stop', left.waiting + left.outstanding);
        // Not process.exit: it joins every thread, and one may be stuck in native code.
        native.exitNow(1);
      });
      return;
    }
    stopping = true;
    stopWatching();
    // Until the process exits (the server lets its own SIGHUP handler go when its stop ends).
    process.on('SIGHUP', () => {
      if (process.listenerCount('SIGHUP') === 1) server.thread.log.warn('SIGHUP: plugin reload is unavailable: the server is stopping');
    });
    server.thread.log.info(`${signal} received: stopping`);
    server.stop().then(async () => {
      server.thread.log.info('stopped');
      await exit(0);
    }, async (err: unknown) => {
      process.stderr.write(`gsf: stop failed: ${describeError(err)}\n`);
      await exit(1);
    });
  };
  onSignal = stop;
  if (early !== null) stop(early);
}

/** The native core, once the server has loaded it. */
const native = async (): Promise<{ exitNow(code: number): void }> => (await nativeModule()).native;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      await start(rest);
      break;
    case 'authenticator': {
      onlyOptions('authenticator', rest, ['--manifest'], []);
      const { runAuthenticator, DEFAULT_AGENT_MANIFEST } = await loadModule<typeof import('./auth/agent/command.ts')>(import.meta.url, './auth/agent/command.ts');
      await runAuthenticator(option(rest, '--manifest') ?? DEFAULT_AGENT_MANIFEST);
      break;
    }
    case 'objects': {
      const { runObjectsCommand, OBJECTS_USAGE } = await loadModule<typeof import('./objects-command.ts')>(import.meta.url, './objects-command.ts');
      helpAsked(rest, OBJECTS_USAGE);
      if (rest[0] !== 'types') {
        const said = rest[0] === undefined ? 'gsf: objects needs a command\n' : `gsf: unknown objects command '${rest[0]}'\n`;
        process.stderr.write(said + OBJECTS_USAGE);
        process.exit(2);
      }
      // A mistyped --check would otherwise write the files it was meant to check.
      onlyOptions('objects', rest.slice(1), ['--manifest', '--out'], ['--check']);
      process.exitCode = runObjectsCommand(rest, (name) => option(rest, name), (text) => process.stdout.write(text));
      break;
    }
    case 'bench': {
      // The benchmarks ship with the repository, not with the npm package.
      const bench = new URL('../bench/run.ts', import.meta.url);
      if (!fs.existsSync(bench)) {
        process.stderr.write('gsf: the benchmarks are not part of the installed package; run them from a clone of the gsf repository\n');
        process.exit(2);
      }
      // Benchmarks load the testing build of the addon (npm run build:testing), for the
      // boundary measurements of the native benchmark.
      process.env.GSF_NATIVE_TESTING ??= '1';
      helpAsked(rest, USAGE);
      const { runBenchmarks, unknownBenchmarks, optionProblem, BENCHMARK_NAMES } = await loadModule<typeof import('../bench/run.ts')>(import.meta.url, '../bench/run.ts');
      const unknown = unknownBenchmarks(rest);
      if (unknown.length > 0) {
        process.stderr.write(`gsf: unknown benchmark '${unknown[0]}' (known: ${BENCHMARK_NAMES.join(', ')})\n`);
        process.exit(2);
      }
      const problem = optionProblem(rest);
      if (problem !== null) {
        process.stderr.write(`gsf bench: ${problem}\n`);
        process.exit(2);
      }
      await runBenchmarks(rest);
      break;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      break;
    default:
      process.stderr.write(`gsf: unknown command '${command}'\n${USAGE}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`gsf: ${describeError(err)}\n`);
  process.exit(1);
});
