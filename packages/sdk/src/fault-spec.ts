// The fault syntax alone: the simulator itself loads only when it starts (R-V2).
import { type FaultSpec, parseFaultSpec } from "@forkloop/sim/faults";
import { OptionsError } from "./options-error.js";

/** `--faults` / `FORKLOOP_SIM_FAULTS`: the simulator's fault syntax; a bad spec is exit 2 with an example. */
export function parseFaultsFlag(text: string, flag = "--faults"): FaultSpec {
  try {
    return parseFaultSpec(text);
  } catch (error) {
    throw new OptionsError(
      `${flag} "${text}": ${error instanceof Error ? error.message : String(error)}. Example: --faults "429@1,529@2-3" or "random:seed=7,p429=0.1".`,
    );
  }
}
