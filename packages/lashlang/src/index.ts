/**
 * @lash/lashlang — the Lashlang language: parser, checker, evaluator, builtins, diagnostics,
 * REPL state snapshots. Depends on nothing of ours (chevrotain only).
 */
export type * from "./ast.ts";
export { BUILTIN_NAMES, BUILTINS, formatString, RANGE_LIMIT } from "./builtins.ts";
export {
  type Abilities,
  type CheckError,
  type CheckOptions,
  check,
  type HostSurface,
  type ModuleSpec,
  type OperationSpec,
} from "./checker.ts";
export { type CliIO, runLashlangCli } from "./cli.ts";
export { type Diagnostic, makeDiagnostic, type Phase } from "./diagnostics.ts";
export {
  DEFAULT_STEP_BUDGET,
  type HandleRequest,
  type HostRequest,
  type OperationCall,
  type OperationResult,
  type StartRequest,
} from "./interp.ts";
export { NESTING_LIMIT, ParseError, parse } from "./parser.ts";
export { printExpr, printProgram } from "./printer.ts";
export {
  type CellProcessContext,
  durationMs,
  HANDLE_KEY,
  type ProcessEvent,
  type ProcessOptions,
  type ProcessRecord,
  ProcessRuntime,
  type ProcessTimers,
  untilMs,
  wallTimers,
} from "./processes.ts";
export {
  type CellResult,
  checkCell,
  type LashlangHost,
  LashlangSession,
  LashlangState,
  type ParseResult,
  type ProjectedBinding,
  parseCell,
  type RunOptions,
  renderPrint,
  runCell,
  runProgram,
  type SessionOptions,
} from "./runner.ts";
export {
  decodeValue,
  encodeValue,
  PROJECTED_MARKER,
  type ProjectedMarker,
  TUPLE_MARKER,
} from "./snapshot.ts";
export { typeToSchema, validateAgainst } from "./types.ts";
export {
  equals,
  fromJson,
  Image,
  type Json,
  jsonText,
  LangError,
  List,
  Rec,
  Resource,
  stringify,
  Tuple,
  toJson,
  truthy,
  typeName,
  type Value,
} from "./values.ts";
