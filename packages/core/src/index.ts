/**
 * @lash/core — the public API for hosts: the promise facade (`createLash`), the Effect
 * runtime (`LashRuntime` and the services it needs), session stores, tools, plugins, RLM
 * mode and their errors. Named exports only, so every addition is a deliberate choice
 * that shows up in `api/core.api.md`. lash's own packages reach internals through the
 * unstable `@lash/core/internal` entry point.
 */
export type {
  TurnActivity,
  TurnActivityBody,
} from "./activity.ts";
export type { ApprovalRecord } from "./approval.ts";
export {
  ARTIFACT_CHUNK_BYTES,
  ARTIFACT_FILE_BYTES,
  ARTIFACT_GC_MIN_AGE_MS,
  Artifacts,
  type ArtifactsShape,
  artifactIdOfRef,
  artifactRef,
  artifactRefsOf,
  type CollectArtifactsOptions,
  collectArtifacts,
  isArtifactId,
} from "./artifacts.ts";
export {
  type OutputBudgetOptions,
  outputBudgetPlugin,
  ToolOutputs,
  type ToolOutputsShape,
} from "./budget.ts";
export {
  type CompactionOptions,
  CompactionPayload,
  isCompaction,
  type ProjectedHistory,
  projectHistory,
} from "./compaction/compact.ts";
export { messageTokens, requestTokens } from "./compaction/estimate.ts";
export { COMPACTION_SYSTEM, SUMMARY_PREFIX, SUMMARY_SECTIONS } from "./compaction/prompt.ts";
export type { DispatchOptions } from "./dispatch.ts";
export {
  createLash,
  type Lash,
  type LashOptions,
  type LashSession,
  type TurnRun,
} from "./facade.ts";
export {
  type ApprovalAnswer,
  type ApprovalDecision,
  ApprovalError,
  type ApprovalItem,
  type ApprovalRequest,
  Approver,
  type ApproverShape,
  Governance,
  type GovernanceShape,
  type GovernedCall,
  type RiskSummary,
  type Verdict,
} from "./governance.ts";
export { ActivityExpired } from "./hub.ts";
export {
  EffectJournal,
  Journal,
  type JournalBackend,
  type JournalIds,
  JournalMismatch,
  type StepOptions,
} from "./journal.ts";
export type {
  BeforeToolCallResult,
  BeforeTurnResult,
  HookContext,
  Plugin,
  PluginHooks,
  ProjectedResult,
  ToolCallInfo,
} from "./plugin.ts";
export {
  type ExecutorOptions,
  type FrameSnapshot,
  isRlmSnapshot,
  type RlmMode,
  type RlmOptions,
  type RlmSessionOptions,
  RlmSessionState,
  type RlmSnapshot,
  rlmMode,
  rlmSessionState,
  withRlm,
} from "./rlm/index.ts";
export {
  dueFirings,
  firingText,
  nextFiring,
  runTriggerProcess,
  type TriggerRecord,
  type TriggerSchedulerOptions,
  triggerScheduler,
} from "./rlm/triggers.ts";
export {
  type AbandonedTurn,
  type CodeExecutor,
  type CompactionResult,
  type Comparison,
  type CreateSessionOptions,
  describeHolder,
  type ExecContext,
  LashRuntime,
  type LashRuntimeShape,
  type LeaseOptions,
  type ProjectorContext,
  type RuntimeOptions,
  TurnError,
  type TurnHandle,
  type TurnInput,
  type TurnOptions,
  type TurnResult,
  type UsageSummary,
} from "./runtime.ts";
export {
  envSecrets,
  isSecretEnvName,
  looksLikeKey,
  MIN_SECRET_LENGTH,
  makeRedactor,
  type Redactor,
  type RedactorOptions,
  type ScrubbedEnv,
  type ScrubOptions,
  SECRET_ENV_PATTERNS,
  type SecretValue,
  scrubEnv,
} from "./secrets.ts";
export {
  IdGenerator,
  type IdGeneratorShape,
  LlmProviders,
  type LlmProvidersShape,
  ModelCatalog,
  type ModelCatalogShape,
  UnknownModel,
} from "./services.ts";
export {
  type LockHolder,
  sqliteFileUsers,
  sqliteLockHolders,
} from "./store/lock-holders.ts";
export {
  MemoryStore,
  makeMemoryStore,
} from "./store/memory.ts";
export {
  type OpenedStore,
  openMemoryStore,
  openSqliteStore,
  type PromiseStore,
} from "./store/promise.ts";
export {
  GraphNodeSchema,
  JournalEntrySchema,
  NewNodeSchema,
  PendingTurnSchema,
  ToolOutputRecordSchema,
  TurnCommitSchema,
  UsageRowSchema,
} from "./store/schema.ts";
export {
  makeSqliteStore,
  SQLITE_SCHEMA_VERSION,
  SqliteStore,
  type SqliteStoreOptions,
} from "./store/sqlite-lazy.ts";
export {
  checkSqliteFile,
  recoverSqliteFile,
  type SqliteCheck,
  type SqliteRecovery,
  SqliteRepairError,
  type TableRecovery,
} from "./store/sqlite-repair.ts";
export {
  type ArtifactGcOptions,
  type ArtifactGcResult,
  type ArtifactInfo,
  type ArtifactPut,
  type CommitResult,
  fromLastCompaction,
  type GraphNode,
  isCompactionNode,
  type JournalEntry,
  type JournalStatus,
  type LeaseAttempt,
  type LeaseRequest,
  type ListOptions,
  type NewNode,
  type NodeKind,
  type PendingTurn,
  SchemaTooNew,
  type SessionLease,
  type SessionMode,
  SessionNotFound,
  type SessionRecord,
  SessionStore,
  type SessionStoreShape,
  StoreConflict,
  StoreCorrupt,
  StoreError,
  type StoreFailure,
  type ToolOutputRecord,
  type TurnCommit,
  type UsageRow,
} from "./store.ts";
export {
  type ChildRunner,
  type ChildTurnOptions,
  type ChildTurnResult,
  defineTool,
  type Emitter,
  type JsonSchema,
  type Llm,
  type LlmCall,
  type LlmCallResult,
  type Sessions,
  type ToolContext,
  type ToolDefinition,
  type ToolEffectKind,
  ToolFailure,
  type ToolFailureClass,
  type ToolHost,
  type ToolOutput,
  type ToolPreview,
  type ToolPreviewContext,
  type ToolUsage,
  textOutput,
  toolEffects,
} from "./tool.ts";
export {
  HANDOFF_PREFIX,
  type HandoffLinks,
  HandoffPayload,
  handoffLinks,
  newestSuccessor,
} from "./turn/handoff.ts";
