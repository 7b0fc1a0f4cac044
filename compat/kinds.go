package compat

// kinds is every Change.Kind that Check reports.
var kinds = func() []string {
	ks := []string{
		"false-schema",
		"type-added", "type-removed", "type-changed", "type-narrowed", "type-widened",
		"enum-added", "enum-removed", "const-added", "const-removed", "const-changed",
		"enum-value-added", "enum-value-removed",
		"pattern-added", "pattern-removed", "pattern-changed",
		"format-added", "format-removed", "format-changed",
		"multiple-of-added", "multiple-of-removed", "multiple-of-expanded", "multiple-of-reduced", "multiple-of-changed",
		"unique-items-added", "unique-items-removed",
		"contains-added", "contains-removed",
		"tuple-item-added", "tuple-item-removed",
		"additional-items-added", "additional-items-removed",
		"property-added-open-model", "property-removed-open-model",
		"property-added-closed-model", "property-removed-closed-model",
		"property-added-not-covered", "property-removed-not-covered",
		"additional-properties-added", "additional-properties-removed",
		"additional-properties-extended", "additional-properties-narrowed",
		"unevaluated-properties-added", "unevaluated-properties-removed",
		"unevaluated-properties-extended", "unevaluated-properties-narrowed",
		"pattern-property-added", "pattern-property-removed",
		"required-added", "required-removed",
		"dependent-required-added", "dependent-required-removed",
		"dependent-required-extended", "dependent-required-narrowed",
		"dependent-schema-added", "dependent-schema-removed",
		"property-names-added", "property-names-removed",
		"not-added", "not-removed", "not-changed",
		"conditional-added", "conditional-removed", "conditional-changed",
		"sum-type-narrowed", "sum-type-extended", "combined-type-changed",
	}
	for _, kw := range []string{
		"minimum", "maximum", "exclusive-minimum", "exclusive-maximum",
		"min-length", "max-length", "min-items", "max-items",
		"min-properties", "max-properties", "min-contains", "max-contains",
	} {
		for _, s := range []string{"added", "removed", "increased", "decreased"} {
			ks = append(ks, kw+"-"+s)
		}
	}
	return ks
}()
