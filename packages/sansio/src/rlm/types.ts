/** Plain data the RLM driver and prompt renderer work from (supplied by the host). */

/** How a turn may end (reference §2.1, §2.6). */
export type RlmTermination =
  | { readonly kind: "natural" }
  | { readonly kind: "finishRequired"; readonly schema?: { readonly [key: string]: unknown } };

export type RlmFinalAnswerFormat =
  | { readonly kind: "markdown" }
  | { readonly kind: "custom"; readonly guidance: string }
  | { readonly kind: "rawFinalValue" };

/** A host operation as Lashlang sees it: `await module.operation({...})`. */
export interface RlmOperation {
  /** Host tool name (`read_file`), or the executor built-in (`llm_query`, `continue_as`). */
  readonly name: string;
  /** Module path, e.g. `files`, `mcp.github`. */
  readonly module: string;
  readonly operation: string;
  readonly description: string;
  readonly inputSchema: { readonly [key: string]: unknown };
  /** Return shape for the catalog (`{path, content, ...}`); `any` when absent. */
  readonly returns?: string;
}

/** One bound variable as the tail shows it. */
export interface RlmBinding {
  readonly name: string;
  /** Inferred type, e.g. `str`, `list[record]`. */
  readonly type: string;
  /** The whole value (compact JSON) when it is small enough to show losslessly. */
  readonly inline?: string;
  /** A truncated preview when it is not. */
  readonly preview?: string;
  readonly len?: number;
  readonly lines?: number;
  readonly keys?: number;
}

/** Per-iteration input of the driver: what the host knows about the session's Lashlang state. */
export interface RlmEnvironment {
  readonly termination: RlmTermination;
  /** Bound globals of the active frame, sorted by name (projected names excluded). */
  readonly bindings: readonly RlmBinding[];
  readonly finalAnswerFormat?: RlmFinalAnswerFormat;
  /** Token budget of the frame (the frame switch threshold); enables the CONTEXT BUDGET section. */
  readonly contextBudget?: number;
  /**
   * A host-made cell to run first, without asking the model (a trigger firing: the registered
   * target process started with its inputs). The turn ends when the cell finishes.
   */
  readonly firing?: string;
}

/** An entry of the projected `history` binding (reference §2.8). */
export type RlmHistoryItem =
  | {
      readonly kind: "message";
      readonly id: string;
      readonly role: "user" | "assistant" | "system" | "event";
      readonly content: string;
      readonly attachments: readonly RlmAttachmentRef[];
    }
  | {
      readonly kind: "lashlang_step";
      readonly id: string;
      readonly prose: string;
      readonly code: string;
      readonly output: readonly string[];
      readonly images: readonly RlmAttachmentRef[];
      readonly error?: string;
      readonly final_output?: unknown;
    };

export interface RlmAttachmentRef {
  readonly id: string;
  readonly media_type: string;
  readonly label?: string;
}
