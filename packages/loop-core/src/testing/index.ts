export { freePort } from "./free-port.js";
export {
  HOSTILE_KINDS,
  type HostileBehaviour,
  type HostileKind,
  type HostileRecord,
  type HostileRequest,
  type HostileServer,
  type HostileServerOptions,
  startHostileServer,
} from "./hostile-server.js";
export {
  type ScriptedBlock,
  type ScriptedReply,
  scriptedCallModel,
} from "./scripted-model.js";
export { type Collected, collect, testContext, testTool } from "./test-helpers.js";
export { toolPairingViolations } from "./tool-pairing.js";
