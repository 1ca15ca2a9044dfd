export {
  type ScriptedBlock,
  type ScriptedReply,
  scriptedCallModel,
} from "./scripted-model.js";
export { type Collected, collect, testContext, testTool } from "./test-helpers.js";
