/**
 * `@forkloop/sdk/model-endpoint`: endpoint resolution and the models file without the rest of the
 * SDK, so `forkloop sim` starts without loading the orchestrator and its worker pool.
 */
export { parseFaultsFlag } from "./fault-spec.js";
export {
  EMBEDDED_SIM_RECORD_LIMIT,
  type ModelEndpoint,
  type ModelSource,
  resolveModelSource,
  SIMULATOR_NOTICE,
} from "./model-endpoint.js";
export { RETRY_ENV, retryOptionsFromEnv, withSettingsRetryEnv } from "./model-retry.js";
export { loadModelsFile, MODELS_FILE_EXAMPLE, modelsFileSchema, toModelOverrides } from "./models-file.js";
export { OptionsError } from "./options-error.js";
