// Package schemas embeds the JSON Schemas of keys.yaml and of the codegen
// request (keyreg gen json).
//
// The same file, schemas/keys.v1.schema.json, serves two readers: the
// registry loader validates every keys.yaml against it before building the
// model, and editors pick it up through the yaml-language-server modeline
//
//	# yaml-language-server: $schema=schemas/keys.v1.schema.json
//
// to offer completion, hover docs and inline errors.
//
// The payload schemas of the example registry (schemas/*.v1.json and so on)
// live in the same directory but are not embedded: they belong to the
// registry, not to keyreg.
package schemas

import _ "embed"

// KeysV1ID is the $id of the keys.yaml format version 1 schema.
const KeysV1ID = "https://keyreg.dev/schemas/keys.v1.schema.json"

// KeysV1 is the JSON Schema (draft 2020-12) of keys.yaml format version 1.
// Its $id is KeysV1ID. Callers must not modify it.
//
//go:embed keys.v1.schema.json
var KeysV1 []byte

// CodegenRequestV1ID is the $id of the schema of keyreg gen json's output.
const CodegenRequestV1ID = "https://keyreg.dev/schemas/codegen-request.v1.schema.json"

// CodegenRequestV1 is the JSON Schema (draft 2020-12) of the codegen
// request, version 1, that keyreg gen json writes (docs/codegen.md). Its
// $id is CodegenRequestV1ID. Callers must not modify it.
//
//go:embed codegen-request.v1.schema.json
var CodegenRequestV1 []byte
