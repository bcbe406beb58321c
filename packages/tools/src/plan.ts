import type { ToolDefinition, ToolOutput } from "@lash/core";
import { asArgs, hostTool, invalid, optionalString } from "./util.ts";

export type PlanStatus = "pending" | "in_progress" | "completed";

export interface PlanItem {
  readonly text: string;
  readonly status: PlanStatus;
}

export interface UpdatePlanArgs {
  readonly items: readonly PlanItem[];
  readonly explanation?: string;
}

/** The structured value of `update_plan` (`plan.update`); `details` carries the same for UIs. */
export interface PlanValue {
  readonly items: readonly PlanItem[];
  readonly explanation?: string;
  readonly completed: number;
  readonly total: number;
}

const STATUSES: readonly PlanStatus[] = ["pending", "in_progress", "completed"];
const MARK: Record<PlanStatus, string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]" };

export function updatePlanTool(): ToolDefinition<UpdatePlanArgs> {
  return hostTool<UpdatePlanArgs>({
    name: "update_plan",
    description: [
      "Record your plan for the current task as a checklist the user can see. Send the WHOLE list every time (it replaces the previous one), with each item's status: `pending`, `in_progress` (normally exactly one at a time) or `completed`.",
      "Use it for multi-step work: make the plan first, then mark items as you go. Skip it for trivial one-step tasks.",
      "Returns a short summary of the checklist.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        items: {
          type: "array",
          description: "The complete checklist, in order.",
          items: {
            type: "object",
            properties: {
              text: { type: "string", minLength: 1, description: "What the step does (one short sentence)." },
              status: { type: "string", enum: [...STATUSES] },
            },
            required: ["text", "status"],
            additionalProperties: false,
          },
        },
        explanation: { type: "string", description: "Optional note on why the plan changed." },
      },
      required: ["items"],
      additionalProperties: false,
    },
    // effects read: it changes only this session's own checklist, nothing in the workspace or beyond
    // (no approval, no dry-run stub); readOnly stays false: it is not a "changes nothing" tool
    // for read-only children (explore), which get no plan of their own
    readOnly: false,
    effects: ["read"],
    idempotent: true,
    family: "plan",
    binding: {
      module: "plan",
      operation: "update",
      returns: "{items: [{text, status}], explanation?, completed, total}",
    },
    run: async (rawArgs): Promise<ToolOutput> => {
      const args = asArgs("update_plan", rawArgs);
      const explanation = optionalString("update_plan", args, "explanation");
      if (!Array.isArray(args.items))
        throw invalid("update_plan: `items` must be an array of {text, status}.");
      const items: PlanItem[] = args.items.map((raw: unknown, i) => {
        const item = raw as { text?: unknown; status?: unknown } | null;
        if (
          typeof item !== "object" ||
          item === null ||
          typeof item.text !== "string" ||
          item.text.trim() === ""
        ) {
          throw invalid(`update_plan: items[${i}] needs a non-empty \`text\` string.`);
        }
        if (!STATUSES.includes(item.status as PlanStatus)) {
          throw invalid(
            `update_plan: items[${i}].status must be one of ${STATUSES.join(", ")} (got ${JSON.stringify(item.status)}).`,
          );
        }
        return { text: item.text.trim(), status: item.status as PlanStatus };
      });
      const completed = items.filter((i) => i.status === "completed").length;
      const current = items.find((i) => i.status === "in_progress");
      const lines = [
        `Plan updated: ${completed}/${items.length} completed${current === undefined ? "" : `; in progress: ${current.text}`}.`,
        ...items.map((i) => `${MARK[i.status]} ${i.text}`),
      ];
      const value: PlanValue = {
        items,
        ...(explanation === undefined ? {} : { explanation }),
        completed,
        total: items.length,
      };
      return { content: [{ type: "text", text: lines.join("\n") }], value, details: value };
    },
  });
}
