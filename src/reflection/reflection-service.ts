import { create, createRegistry, type DescFile, type Registry, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "../../gen/ts/grpc/reflection/v1/reflection_pb.js";

interface Lookup {
  symbols: Registry;
  files: Map<string, DescFile>;
}

const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;

/**
 * grpc.reflection.v1 from the descriptors compiled into the generated code,
 * so grpcurl and buf curl need no .proto files.
 */
export function reflectionServiceImpl(files: DescFile[], serviceNames: string[]): ServiceImpl<typeof ServerReflection> {
  const registry: Lookup = { symbols: createRegistry(...files), files: new Map(files.map((f) => [f.proto.name, f])) };
  return {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield answer(req, registry, serviceNames);
    },
  };
}

function answer(req: ServerReflectionRequest, registry: Lookup, serviceNames: string[]): ServerReflectionResponse {
  const base = { validHost: req.host, originalRequest: req };
  const files = (file: DescFile | undefined, what: string) =>
    file
      ? create(ServerReflectionResponseSchema, {
          ...base,
          messageResponse: { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } },
        })
      : error(base, NOT_FOUND, `${what} not found`);
  const r = req.messageRequest;
  switch (r.case) {
    case "listServices":
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } },
      });
    case "fileByFilename":
      return files(findFile(registry, r.value), `file ${r.value}`);
    case "fileContainingSymbol":
      return files(fileOfSymbol(registry, r.value), `symbol ${r.value}`);
    case "allExtensionNumbersOfType":
      // No extensions are declared; an empty list is the truthful answer.
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: { case: "allExtensionNumbersResponse", value: { baseTypeName: r.value, extensionNumber: [] } },
      });
    case "fileContainingExtension":
      return error(base, NOT_FOUND, `extension ${r.value.containingType}:${r.value.extensionNumber} not found`);
    default:
      return error(base, UNIMPLEMENTED, "unsupported reflection request");
  }
}

function error(
  base: { validHost: string; originalRequest: ServerReflectionRequest },
  code: number,
  message: string,
): ServerReflectionResponse {
  return create(ServerReflectionResponseSchema, {
    ...base,
    messageResponse: { case: "errorResponse", value: { errorCode: code, errorMessage: message } },
  });
}

function findFile(registry: Lookup, name: string): DescFile | undefined {
  return registry.files.get(name);
}

function fileOfSymbol(registry: Lookup, symbol: string): DescFile | undefined {
  const direct = registry.symbols.get(symbol);
  if (direct) return direct.file;
  // A method's full name is "package.Service.Method".
  const dot = symbol.lastIndexOf(".");
  const service = dot > 0 ? registry.symbols.getService(symbol.slice(0, dot)) : undefined;
  return service?.methods.some((m) => m.name === symbol.slice(dot + 1)) ? service.file : undefined;
}

/** The file and everything it imports, dependencies first, each once. */
function withDependencies(file: DescFile): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.add(f.proto.name);
    for (const dep of f.dependencies) visit(dep);
    out.push(toBinary(FileDescriptorProtoSchema, f.proto));
  };
  visit(file);
  return out;
}
