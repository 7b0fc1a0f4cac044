// Package codegen is what every code generator of keyreg shares: the
// Request, built and validated once from a registry in language-neutral
// terms (NewRequest), the Generator interface that a language backend
// implements, the Scope of families to generate, the registry Digest, and
// the line diff that keyreg gen --check prints (UnifiedDiff).
//
// The backends are packages below this one: codegen/golang (keyreg gen
// go) and codegen/jsongen (keyreg gen json, the request itself as a
// document). This package imports none of them.
package codegen
