/**
 * The trust corpus, part five (R-S9 and the surfaces added after the corpus was first written):
 * a second session started while a sandboxed background command of the first still runs; a
 * sub-agent resumed by SendMessage after the mode changed. Build
 * first (`npm run build`): batch items run the built worker.
 */
import { describeCorpus } from "./corpus-suite.js";
import { groups as resumedMode } from "./resumed-mode.cases.js";
import { groups as schemaPatterns } from "./schema-patterns.cases.js";
import { groups as secondSession } from "./second-session.cases.js";

describeCorpus([...secondSession, ...resumedMode, ...schemaPatterns]);
