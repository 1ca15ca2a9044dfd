/**
 * The trust corpus, part two (R-S9, R-S10, R-S11 settings): the sandbox keeping what runs
 * later read-only and host sockets out of reach, protected directories judged by their real path,
 * and settings a repository ships not loosening a run. Build first (`npm run build`): sub-agents
 * and batch items run the built worker, and one surface spawns the built binary.
 */
import { describeCorpus } from "./corpus-suite.js";
import { groups as protectedPaths } from "./protected-paths.cases.js";
import { groups as sandbox } from "./sandbox.cases.js";
import { groups as settings } from "./settings.cases.js";

describeCorpus([...sandbox, ...protectedPaths, ...settings]);
