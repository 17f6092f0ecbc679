import { create, type DescMethodUnary, type Message } from "@bufbuild/protobuf";
import type { HandlerContext, MethodImplSpec, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import type { CallState } from "./call.js";
import type { GrpcOptions } from "./handler.js";
import { envelope, serialize, worthCompressing } from "./message.js";

export type UnarySpec = MethodImplSpec & { kind: "unary"; method: DescMethodUnary };

/**
 * A request made here: its signal is made when first read (a prototype
 * getter: an accessor in each object literal cost more than the signal
 * saved). An interceptor that copies a request with a spread must name
 * `signal` in the copy, as it is not an own property.
 */
class FastRequest {
  readonly stream = false as const;
  constructor(
    readonly message: Message,
    readonly method: DescMethodUnary,
    readonly service: UnaryRequest["service"],
    readonly requestMethod: string,
    readonly url: string,
    readonly header: Headers,
    readonly contextValues: UnaryRequest["contextValues"],
    readonly state: CallState,
  ) {}
  get signal(): AbortSignal {
    return this.state.signal;
  }
}

/** Whether the call of `req` is over already, without making a request's signal here. */
export function isAbandoned(req: { signal: AbortSignal }): boolean {
  return req instanceof FastRequest ? req.state.aborted : req.signal.aborted;
}

/**
 * Runs a unary implementation through the interceptors, as Connect's
 * invokeUnaryImplementation does, but without reading the call's signal on
 * the way: the request and the handler's context make it only when asked.
 * Returns the answer in its envelope.
 */
export async function answerUnary(
  spec: UnarySpec,
  input: Message,
  context: HandlerContext,
  state: CallState,
  gzip: boolean,
  options: GrpcOptions,
): Promise<Uint8Array> {
  const { method } = spec;
  const service = method.parent;
  const impl = async (req: UnaryRequest): Promise<UnaryResponse> => ({
    stream: false,
    method,
    service,
    message: create(method.output, await spec.impl(req.message, handlerContext(context, req))),
    header: context.responseHeader,
    trailer: context.responseTrailer,
  });
  let next = impl;
  for (let i = options.interceptors.length - 1; i >= 0; i--) next = (options.interceptors[i] as (n: typeof next) => typeof next)(next);
  const request = new FastRequest(
    input,
    method,
    service,
    context.requestMethod,
    context.url,
    context.requestHeader,
    context.values,
    state,
  ) as unknown as UnaryRequest;
  const { message: output, header, trailer } = await next(request);
  copyHeaders(header, context.responseHeader);
  copyHeaders(trailer, context.responseTrailer);
  const bytes = serialize(spec.method, output, options.writeMaxBytes);
  const compress = gzip && worthCompressing(bytes);
  if (compress) context.responseHeader.set("grpc-encoding", "gzip");
  return envelope(bytes, compress);
}

/** The context the implementation sees: the call's, with what the interceptors passed on (Connect's mergeRequest). */
function handlerContext(context: HandlerContext, req: UnaryRequest): HandlerContext {
  return new ImplContext(context, req);
}

class ImplContext {
  readonly service: HandlerContext["service"];
  readonly method: HandlerContext["method"];
  readonly protocolName: string;
  readonly requestMethod: string;
  readonly timeoutMs: HandlerContext["timeoutMs"];
  readonly requestHeader: Headers;
  readonly responseHeader: Headers;
  readonly responseTrailer: Headers;
  readonly url: string;
  readonly values: HandlerContext["values"];
  readonly #req: UnaryRequest;
  constructor(context: HandlerContext, req: UnaryRequest) {
    this.service = req.service;
    this.method = context.method;
    this.protocolName = context.protocolName;
    this.requestMethod = context.requestMethod;
    this.timeoutMs = context.timeoutMs;
    this.requestHeader = req.header;
    this.responseHeader = context.responseHeader;
    this.responseTrailer = context.responseTrailer;
    this.url = context.url;
    this.values = req.contextValues;
    this.#req = req;
  }
  get signal(): AbortSignal {
    return this.#req.signal;
  }
}

/** Connect's copyHeaders: `to` takes exactly what `from` holds. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => {
    to.set(key, value);
  });
}
