package codegen

// For diff_go_test.go, which diffs the Go backend's output from package
// codegen_test (package codegen cannot import its backends).
var (
	Counts     = counts
	ApplyPatch = applyPatch
	HunkHeader = hunkHeader
)
