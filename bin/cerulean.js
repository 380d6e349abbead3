#!/usr/bin/env node
// The `cerulean` command: runs the compiled server (npm ci builds it through `prepare`).
import '../dist/src/main.js';
