// SQLSTATE codes the service reacts to. Both drivers put them on `code`.
export const PgCode = {
  serializationFailure: "40001",
  deadlockDetected: "40P01",
  untranslatableCharacter: "22P05",
  invalidTextRepresentation: "22P02",
  characterNotInRepertoire: "22021",
  programLimitExceeded: "54000",
  stackDepthExceeded: "54001",
  numericOutOfRange: "22003",
  tooManyConnections: "53300",
  adminShutdown: "57P01",
  cannotConnectNow: "57P03",
  queryCanceled: "57014",
} as const;

export function sqlState(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
