#!/usr/bin/env node
// The `cerulean` command: the server by default, tools as subcommands (npm ci builds dist through `prepare`).
import { runCli } from '../dist/src/cli/main.js';

await runCli(process.argv.slice(2));
