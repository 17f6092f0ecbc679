import { createContextKey } from "@connectrpc/connect";
import type { TokenGrant } from "./tokens.js";

/**
 * The caller's grant, for handlers whose answers depend on it (the console's
 * service). Undefined when the server runs without tokens.
 */
export const grantKey = createContextKey<TokenGrant | undefined>(undefined, { description: "token grant" });
