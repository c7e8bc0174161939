"""gRPC layer: protobuf in, plain request dataclasses out (no protobuf past this package)."""
