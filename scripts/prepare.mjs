#!/usr/bin/env node
// npm's `prepare`: compiles the server and the explorer's browser modules into dist/ in a checkout
// (`npm ci`, `npm pack`). An installed package has no src/ and ships dist/ already (package.json
// "files"), and a production install has no TypeScript: there is nothing to do.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (existsSync('src') && existsSync('node_modules/typescript/bin/tsc')) {
  for (const project of ['tsconfig.build.json', 'explorer/tsconfig.json']) {
    const compile = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project], {
      stdio: 'inherit',
    });
    if (compile.status !== 0) process.exit(compile.status ?? 1);
  }
}
