#!/usr/bin/env node
// The gsf command. Plugins and gsf itself are TypeScript, loaded through tsx with no build step:
// its require hook compiles each module in this thread (src/load-module.ts).
import { createRequire } from 'node:module';
import { register } from 'tsx/cjs/api';

register();
createRequire(import.meta.url)('../src/cli.ts');
