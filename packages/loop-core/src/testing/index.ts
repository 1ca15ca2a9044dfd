export { freePort } from "./free-port.js";
export {
  type ScriptedBlock,
  type ScriptedReply,
  scriptedCallModel,
} from "./scripted-model.js";
export { type Collected, collect, testContext, testTool } from "./test-helpers.js";
export { toolPairingViolations } from "./tool-pairing.js";
