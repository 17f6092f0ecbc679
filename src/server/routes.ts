import type { DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createServiceImplSpec, type ServiceImpl, type ServiceImplSpec } from "@connectrpc/connect";

/** One service implementation, served by Connect's router and by the unary gRPC handler alike. */
export interface ServiceRoute {
  spec: ServiceImplSpec;
  register(router: ConnectRouter): void;
}

export function serviceRoute<S extends DescService>(service: S, impl: ServiceImpl<S>): ServiceRoute {
  return { spec: createServiceImplSpec(service, impl), register: (router) => router.service(service, impl) };
}
