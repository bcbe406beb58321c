// The client every page uses, from the shell (app.tsx): `const lash = useClient()`.
import type { LashClientPromise } from "@lash/client";
import { createContext } from "preact";
import { useContext } from "preact/hooks";

export const ClientContext = createContext<LashClientPromise | undefined>(undefined);

export function useClient(): LashClientPromise {
  const client = useContext(ClientContext);
  if (client === undefined) throw new Error("useClient() outside the console shell");
  return client;
}
