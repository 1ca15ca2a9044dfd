#!/usr/bin/env node
// The `forkloop` command: @forkloop/cli's entry parses argv, runs the command and exits.
import "@forkloop/cli/main";
