// Package registry turns keys.yaml into a model and matches keys against it.
//
// Load (or LoadFile, or Parse for bytes in hand) reads a registry from an
// fs.FS, so that the working tree and a git ref load the same way. It
// validates the file against the embedded JSON Schema of keys.yaml
// (package schemas), parses every pattern, compiles every payload schema,
// and keeps the file:line:col of every node, so that each diagnostic,
// from the loader or from a lint rule, points at the registry's source.
// A registry that cannot be used (a bad pattern, a schema that does not
// compile, an unknown field) fails to load with a diag.ListError.
//
// The model is Registry, with its Families, Owners and Defaults. A Family's
// Pattern is parsed per the grammar of docs/registry.md: literal bytes,
// typed placeholders and hash tags.
//
// Matching is done by a Matcher (Registry.Matcher), built once for all
// families: a radix trie of the patterns with a byte-class automaton in
// front of it. Match and MatchParams find the one family of a key without
// allocating; Closest names the nearest family of a key that matches none
// and says why it failed. ShapeMatcher matches a key against the families'
// shapes (typed placeholders relaxed), to tell a bad placeholder value from
// an unregistered key. Overlaps proves statically which families could
// share a key.
package registry
