/**
 * The trust corpus, part four (R-S4, R-S10): symlink races between the permission check and the
 * write, with a background racer in the sandbox. Build first (`npm run build`): sub-agents run the
 * built worker.
 */
import { describeCorpus } from "./corpus-suite.js";
import { groups as races } from "./races.cases.js";

describeCorpus(races);
