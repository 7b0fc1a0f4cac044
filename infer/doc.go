// Package infer turns the facts of an existing keyspace into a first
// registry: `keyreg init` writes it, `keyreg suggest` proposes families for
// the keys a registry leaves unregistered.
//
// A Miner groups key names into candidate families, each with a pattern of
// keys.yaml's grammar and bounded statistics (Stats): how many keys, their
// Redis types, TTLs, sizes and a few example keys, kept by reservoir
// sampling. Memory is bounded by the number of distinct shapes, never by
// the number of keys: past MaxShapes the miner merges shapes. A
// SchemaInferrer turns sampled JSON and msgpack values into a JSON Schema
// that validates every one of them; an EncodingTally names the encoding to
// declare.
//
// Nothing here talks to Redis or prints: the command drives the scan and
// hands the facts over.
package infer
