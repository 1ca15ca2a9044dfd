#!/usr/bin/env node
// The `forkloop` command: the bundled CLI (scripts/bundle.mjs) parses argv, runs the command and exits.
import "../dist/cli.js";
