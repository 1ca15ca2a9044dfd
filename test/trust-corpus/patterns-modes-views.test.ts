/**
 * The trust corpus, part three (R-S12, R-S14): model- and repository-supplied patterns in
 * bounded time and a signal ending the run (the built binary: a hang must not stop the test
 * runner), a mode changed during a turn reaching every running agent, and forkloop's own views
 * escaping control characters. Build first (`npm run build`).
 */
import { describeCorpus } from "./corpus-suite.js";
import { groups as modes } from "./modes.cases.js";
import { groups as patterns } from "./patterns.cases.js";
import { groups as terminal } from "./terminal.cases.js";

describeCorpus([...patterns, ...modes, ...terminal]);
