// Package keyreg is the root of the keyreg module. It carries the example
// registry of this repository, so that an installed keyreg binary can run
// `keyreg demo` without a checkout.
//
// The command-line tool is in cmd/keyreg; the libraries are in the
// subpackages (registry, scanner, audit, report, ...).
package keyreg

import "embed"

// Example is the repository's own keys.yaml together with the payload
// schemas it references (schemas/*.json), as a read-only file system rooted
// at the repository root. Load it with registry.Load(keyreg.Example,
// "keys.yaml"). `keyreg demo` seeds an embedded Redis from it and audits
// against it.
//
//go:embed keys.yaml schemas/*.json
var Example embed.FS
