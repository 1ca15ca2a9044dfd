/**
 * The trust corpus, part one (R-S7, R-S8, R-S11 state, R-S13): forkloop's own git, project
 * files read through links and special files, state shipped in a checkout, secrets and file modes.
 * Build first (`npm run build`): sub-agents and batch items run the built worker, and one surface
 * spawns the built binary.
 */
import { describeCorpus } from "./corpus-suite.js";
import { groups as git } from "./git-execution.cases.js";
import { groups as files } from "./project-files.cases.js";
import { groups as secrets } from "./secrets-and-modes.cases.js";
import { groups as state } from "./shipped-state.cases.js";

describeCorpus([...git, ...files, ...state, ...secrets]);
