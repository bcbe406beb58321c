// OWNER: helper s2 (auth). `lash serve token create|list|revoke`. STUB until s2 lands.
import type { MainIO } from "./io.ts";

export async function serveTokenCommand(_argv: readonly string[], io: MainIO): Promise<number> {
  io.stderr.write("lash serve token: not built yet\n");
  return 1;
}
