package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/keyreg/keyreg/internal/render"
	"github.com/keyreg/keyreg/registry"
)

// PresetInfo describes one preset for `keyreg presets`: its definition and
// the families it expands into with its default parameters.
type PresetInfo struct {
	Name     string             `json:"name"`
	Summary  string             `json:"summary"`
	Library  string             `json:"library"`
	Tested   []string           `json:"tested"`
	Sources  []string           `json:"sources"`
	Coexists []string           `json:"coexists,omitempty"`
	Notes    string             `json:"notes,omitempty"`
	Params   []PresetParamInfo  `json:"params"`
	Families []PresetFamilyInfo `json:"families"`
	// Channels are the Pub/Sub channels the preset declares (none for most).
	Channels []PresetChannelInfo `json:"channels,omitempty"`
}

// PresetChannelInfo is one channel a preset expands into.
type PresetChannelInfo struct {
	Name          string   `json:"name"`
	Part          string   `json:"part"`
	Each          []string `json:"each,omitempty"`
	Pattern       string   `json:"pattern"`
	Mode          string   `json:"mode"`
	SubscribeGlob string   `json:"subscribe_glob,omitempty"`
	Encoding      string   `json:"encoding"`
	Description   string   `json:"description"`
	Notes         string   `json:"notes,omitempty"`
}

// PresetParamInfo is one parameter of a preset.
type PresetParamInfo struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default string `json:"default"` // as YAML, such as [celery] or "any integer"
	Doc     string `json:"doc"`
}

// PresetFamilyInfo is one family a preset expands into.
type PresetFamilyInfo struct {
	Name        string   `json:"name"`
	Part        string   `json:"part"` // the override name that covers every family of the part
	Each        []string `json:"each,omitempty"`
	Pattern     string   `json:"pattern"`
	Type        string   `json:"type"`
	Encoding    string   `json:"encoding"`
	TTL         string   `json:"ttl"`
	Description string   `json:"description"`
	Notes       string   `json:"notes,omitempty"`
}

// PresetInfos describes every built-in preset, each expanded with its
// defaults.
func PresetInfos() ([]PresetInfo, error) {
	var out []PresetInfo
	for _, p := range registry.Presets() {
		reg, err := registry.ExpandPreset(p.Name, "owner", nil)
		if err != nil {
			return nil, fmt.Errorf("preset %s: %w", p.Name, err)
		}
		info := PresetInfo{Name: p.Name, Summary: p.Summary, Library: p.Library, Tested: p.Tested, Sources: p.Sources, Coexists: p.Coexists, Notes: strings.TrimSpace(p.Notes)}
		for _, q := range p.Params {
			def := "any integer"
			if q.Default != nil {
				def = paramDefault(q)
			}
			info.Params = append(info.Params, PresetParamInfo{Name: q.Name, Kind: q.Kind, Default: def, Doc: q.Doc})
		}
		parts := map[string]registry.PresetPart{}
		for _, part := range p.Parts {
			parts[p.FamilyPrefix+"-"+part.Name] = part
		}
		for _, f := range reg.Families {
			part := parts[f.PresetPart]
			info.Families = append(info.Families, PresetFamilyInfo{
				Name: f.Name, Part: f.PresetPart, Each: part.Each, Pattern: f.Pattern.Source, Type: f.Type,
				Encoding: strings.ReplaceAll(f.Encoding, "|", " or "), TTL: f.TTL.String(),
				Description: f.Description, Notes: strings.TrimSpace(part.Notes),
			})
		}
		chanParts := map[string]registry.PresetPart{}
		for _, part := range p.Channels {
			chanParts[p.FamilyPrefix+"-"+part.Name] = part
		}
		for _, c := range reg.Channels {
			part := chanParts[c.PresetPart]
			info.Channels = append(info.Channels, PresetChannelInfo{
				Name: c.Name, Part: c.PresetPart, Each: part.Each, Pattern: c.Pattern.Source, Mode: c.Mode,
				SubscribeGlob: c.SubscribeGlob, Encoding: strings.ReplaceAll(c.Encoding, "|", " or "),
				Description: c.Description, Notes: strings.TrimSpace(part.Notes),
			})
		}
		out = append(out, info)
	}
	return out, nil
}

// paramDefault writes a default as YAML would: strings quoted when empty
// or when they hold YAML syntax, lists in brackets.
func paramDefault(q registry.PresetParam) string {
	quote := func(s string) string {
		if s == "" || strings.ContainsAny(s, ":#[]{},'\" ") {
			return fmt.Sprintf("%q", s)
		}
		return s
	}
	if q.Kind == registry.ParamStrings || q.Kind == registry.ParamInts {
		vals := make([]string, len(q.Default))
		for i, v := range q.Default {
			vals[i] = quote(v)
		}
		return "[" + strings.Join(vals, ", ") + "]"
	}
	return quote(q.Default[0])
}

// Presets writes the preset list in format f: [Text], [JSON] or [Markdown]
// (the content of docs/presets.md). The options are those of every
// renderer; the preset list reads none of them today.
func Presets(w io.Writer, f Format, presets []PresetInfo, _ Options) error {
	r, err := lookup(f, DocPresets)
	if err != nil {
		return err
	}
	return r.presets(w, presets)
}

// writePresetsText lists each preset with its parameters and families.
func writePresetsText(w io.Writer, presets []PresetInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, p := range presets {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\t%s (tested with %s)\n", p.Name, p.Summary, strings.Join(p.Tested, ", "))
		for _, q := range p.Params {
			fmt.Fprintf(tw, "  with %s\t%s (default %s): %s\n", q.Name, q.Kind, q.Default, q.Doc)
		}
		for _, f := range p.Families {
			fmt.Fprintf(tw, "  %s\t%q\t%s\t%s\tttl %s\n", f.Name, f.Pattern, f.Type, f.Encoding, f.TTL)
		}
		for _, c := range p.Channels {
			fmt.Fprintf(tw, "  channel %s\t%q\t%s\t%s\t%s\n", c.Name, c.Pattern, c.Mode, c.Encoding, c.SubscribeGlob)
		}
	}
	return tw.Flush()
}

// writePresetsJSON prints the presets as a JSON array.
func writePresetsJSON(w io.Writer, presets []PresetInfo) error {
	if presets == nil {
		presets = []PresetInfo{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(presets)
}

// writePresetsMarkdown prints docs/presets.md. The definitions are
// keyreg's own text, so code spans and emphasis are kept (render.MDDoc); patterns
// are code spans.
func writePresetsMarkdown(w io.Writer, presets []PresetInfo) error {
	var b strings.Builder
	b.WriteString("# Framework presets\n\n")
	b.WriteString("<!-- Generated by `keyreg presets --format markdown`. DO NOT EDIT: the definitions are registry/presets/*.yaml. -->\n\n")
	b.WriteString(presetsIntro)
	for _, p := range presets {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", p.Name, anchor(p.Name), render.MD(p.Summary, render.MDDoc))
	}
	for _, p := range presets {
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n\n", p.Name, render.MD(strings.TrimSuffix(p.Summary, "."), render.MDDoc))
		fmt.Fprintf(&b, "Tested against: %s. Families say `managed_by: %s`.", render.MD(strings.Join(p.Tested, ", "), render.MDDoc), p.Library)
		if len(p.Coexists) > 0 {
			fmt.Fprintf(&b, " May share keys with: %s (see [Bull and BullMQ together](#bull-and-bullmq-together)).", codeList(p.Coexists))
		}
		b.WriteString("\n\n")
		if p.Notes != "" {
			b.WriteString(p.Notes + "\n\n")
		}
		b.WriteString("| Parameter | Kind | Default | Meaning |\n| --- | --- | --- | --- |\n")
		for _, q := range p.Params {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", q.Name, q.Kind, render.MDCode(q.Default), render.MD(q.Doc, render.MDDoc))
		}
		if len(p.Params) == 0 {
			b.WriteString("| (none) | | | |\n")
		}
		if len(p.Families) > 0 {
			b.WriteString("\nFamilies with the default parameters:\n\n")
			b.WriteString("| Family | Pattern | Type | Encoding | TTL | What it holds |\n| --- | --- | --- | --- | --- | --- |\n")
		}
		for _, f := range p.Families {
			what := render.MD(f.Description, render.MDDoc)
			if f.Notes != "" {
				what += " " + render.MD(f.Notes, render.MDDoc)
			}
			if len(f.Each) > 0 {
				what += fmt.Sprintf(" One family per value of %s (override all of them as `%s`).", codeList(f.Each), f.Part)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", f.Name, render.MDCode(f.Pattern), f.Type, f.Encoding, f.TTL, what)
		}
		if len(p.Channels) > 0 {
			b.WriteString("\nChannels with the default parameters:\n\n")
			b.WriteString("| Channel | Pattern | Mode | Subscribers use | Encoding | What it carries |\n| --- | --- | --- | --- | --- | --- |\n")
		}
		for _, c := range p.Channels {
			what := render.MD(c.Description, render.MDDoc)
			if c.Notes != "" {
				what += " " + render.MD(c.Notes, render.MDDoc)
			}
			if len(c.Each) > 0 {
				what += fmt.Sprintf(" One channel per value of %s (override all of them as `%s`).", codeList(c.Each), c.Part)
			}
			_, sub := registry.ModeCommands(c.Mode)
			if c.SubscribeGlob != "" {
				sub += " " + render.MDCode(c.SubscribeGlob)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", c.Name, render.MDCode(c.Pattern), c.Mode, sub, c.Encoding, what)
		}
		b.WriteString("\nRead from:\n\n")
		for _, s := range p.Sources {
			fmt.Fprintf(&b, "- %s\n", render.MD(s, render.MDDoc))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}

// anchor is GitHub's heading anchor of a preset name.
func anchor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

const presetsIntro = "A preset declares the keys a framework writes in one entry of `keys.yaml`. It expands,\n" +
	"when the registry loads, into ordinary families: lint, audit, explain, breaking and `gen go` see them\n" +
	"like hand-written ones, and every output names the preset they came from (`explain` prints\n" +
	"`preset celery (keys.yaml:12:5)`, the JSON reports carry `\"preset\": \"celery\"`).\n\n" +
	"```yaml\n" +
	"presets:\n" +
	"  - use: celery                  # the preset\n" +
	"    owner: payments              # required: the owner of every family it expands into\n" +
	"    with:                        # parameters; each has a default (below)\n" +
	"      queues: [celery, reports]\n" +
	"  - use: django\n" +
	"    owner: web\n" +
	"    with: {key_prefixes: [\"\", shop]}\n" +
	"    families:                    # overrides, by expanded family name or by part\n" +
	"      django-cache: {ttl: 1h, description: \"product pages\"}\n" +
	"```\n\n" +
	"- **Names.** A family is named `<preset>-<part>` (`celery-task-result`). A part that is repeated per value\n" +
	"  of a list parameter (`celery-queue`, one per queue) adds the value, made kebab-case, unless it is the\n" +
	"  parameter's single default: queues `[celery, reports]` give `celery-queue` and `celery-queue-reports`.\n" +
	"  Under `families:`, the part's own name overrides all of its families at once; a family's name\n" +
	"  overrides that one (and wins over the part).\n" +
	"- **Overrides** may set `description`, `encoding`, `ttl`, `schema`, `max_bytes`, `max_len`, `max_idle`,\n" +
	"  `deprecated`, `compat`, `compat_policy` and `ignore`. The pattern, type and owner come from the preset;\n" +
	"  to change them, eject: `keyreg presets show celery --with queues=[a,b]` prints the expanded families as\n" +
	"  keys.yaml, ready to paste under `families:` in place of the preset entry.\n" +
	"- **Defaults follow what the library really does**, verified against keyspaces written by the real library\n" +
	"  (`testdata/frameworks`, captured by `scripts/capture`). A healthy keyspace gives no error or warning;\n" +
	"  a wrong type, an unexpected encoding, or a TTL the library never sets (or a missing one it always sets)\n" +
	"  is still a finding.\n" +
	"- **Lint.** A preset's families are exempt from the versioning rule (they say `managed_by`) and do not\n" +
	"  count for `family-unused`. They never overlap one another: where two presets' patterns can match one\n" +
	"  key (a BullMQ job id `meta` and the queue's `meta` hash; Sidekiq's bare `{hostname}:{pid}:{nonce}`\n" +
	"  heartbeat and `bull:{queue}:{id}`), the family with the most literal bytes wins, by design, and lint\n" +
	"  says nothing. It does report a tie between presets that do not coexist, two entries of one preset\n" +
	"  that can match the same key (two owners claim it), and overlaps with a team's own families. An unknown\n" +
	"  preset, parameter or family under `families:` is a load error (exit 2) with its position and a\n" +
	"  suggestion.\n" +
	"- **Limits.** A preset needs the separator `:`, a list parameter holds at most 64 values of at most 256\n" +
	"  bytes, one entry expands into at most 1,024 families, and all entries into at most 10,000.\n" +
	"- **Channels.** A preset may also declare the Pub/Sub channels its library publishes on, under\n" +
	"  `channels:` in its definition, written as channels are in keys.yaml (`pattern`, `mode`,\n" +
	"  `subscribe_glob`, `encoding`). They expand into the registry's `channels:` with the same naming\n" +
	"  (`celery-events`, `socket-io-room-chat`), the same `each:` parameters and the same overrides by\n" +
	"  name under `families:`; a `${param}` in a `subscribe_glob` is escaped as a glob literal.\n" +
	"  `keyreg presets show` prints them after the families, to paste under `channels:`.\n" +
	"- **Twice.** Two teams' apps of one framework (two Celery apps, two BullMQ prefixes) are two entries;\n" +
	"  the second needs `name: <prefix>`, which replaces the preset's name in its families' names\n" +
	"  (`name: ops-celery` gives `ops-celery-queue`).\n\n" +
	"### Bull and BullMQ together\n\n" +
	"Bull and BullMQ can share one prefix in one Redis. Both presets may be used at once: lint does not\n" +
	"report their overlaps, and a key both describe goes to the preset entry declared first. Where the two\n" +
	"libraries share a layout, their families agree on type and TTL, so either attribution is right.\n\n" +
	"## The presets\n\n"
