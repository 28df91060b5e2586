#!/usr/bin/env node
// The gsf command. Plugins and gsf itself are TypeScript, loaded through tsx with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
