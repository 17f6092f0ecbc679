// `sessionstore/adk`: the adk-js adapter. Kept out of the main entry point so
// the server never loads @google/adk (an optional peer dependency).

export { contentFromProto, contentToProto, eventFromProto, eventToProto } from "./event-convert.js";
export { GrpcSessionService } from "./session-service.js";
