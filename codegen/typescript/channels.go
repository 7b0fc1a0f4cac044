package typescript

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

var (
	//go:embed runtime/pubsub.ts
	pubsubRuntime string
	//go:embed runtime/pubsub-redis.ts
	pubsubRedisRuntime string
	//go:embed runtime/pubsub-ioredis.ts
	pubsubIORedisRuntime string
)

// chanView is a Pub/Sub channel with the names the file uses. Its famView
// is the channel's name grammar as a family's (Ident ChatRoomChannel,
// Const CHAT_ROOM_CHANNEL): the builder and parser are the key builder's
// and parser's code (writeKeyCode), with the same checks.
type chanView struct {
	*famView
	Chan *codegen.Channel
	Base string // PascalCase of the channel's name: ChatRoom
}

// chanDerived lists the module-level names of a channel whose base
// identifier is x and constant prefix cn.
func chanDerived(x, cn string) []string {
	id, c := x+"Channel", cn+"_CHANNEL"
	return []string{
		"build" + id, "parse" + id, "is" + id, id, id + "String",
		c + "_PATTERN", c + "_OWNER", c + "_MODE", c + "_ENCODING", c + "_SUBSCRIBE_GLOB",
		x + "Message", "check" + x + "Message", "publish" + x, "subscribe" + x, x + "Delivery",
	}
}

// addChannels names every channel of req after the families.
func (v *view) addChannels(req *codegen.Request, names *namer) error {
	if len(req.Channels) == 0 {
		return nil
	}
	reg := req.Registry()
	byName := map[string]*registry.Channel{}
	if reg != nil {
		for _, c := range reg.Channels {
			byName[c.Name] = c
		}
	}
	for _, c := range req.Channels {
		rc := byName[c.Name]
		if rc == nil || rc.Pattern == nil || len(rc.Pattern.Parts) == 0 {
			return fmt.Errorf("channel %q has no valid pattern", c.Name)
		}
		for _, p := range c.Pattern.Parts {
			if p.LiteralBase64 != "" && c.InScope {
				return fmt.Errorf("channel %q: its pattern's literal bytes are not valid UTF-8, which a JavaScript string cannot hold", c.Name)
			}
		}
		switch c.Mode {
		case registry.ModeClassic, registry.ModeSharded, registry.ModePattern:
		default:
			if c.InScope {
				return fmt.Errorf("channel %q: unknown mode %q", c.Name, c.Mode)
			}
		}
		base, cbase := cmp.Or(pascal(c.Name), "X"), cmp.Or(snake(c.Name), "X")
		x, cn := base, cbase
		for i := 2; !names.free(chanDerived(x, cn)...); i++ {
			x, cn = fmt.Sprint(base, i), fmt.Sprint(cbase, i)
		}
		names.take(chanDerived(x, cn)...)
		fam := &codegen.Family{
			Name: c.Name, InScope: c.InScope, Description: c.Description, Owner: c.Owner,
			Pattern: c.Pattern, Type: "string", Encoding: c.Encoding, Schema: c.Schema, Deprecated: c.Deprecated,
		}
		fv := &famView{Family: fam, reg: &rc.Family, Ident: x + "Channel", Const: cn + "_CHANNEL", channel: true}
		fields := newNamer()
		for _, pt := range rc.Pattern.Parts {
			if !pt.IsPlaceholder() {
				continue
			}
			fv.Params = append(fv.Params, &param{
				Name: pt.Name, Type: pt.Type, Index: len(fv.Params),
				Field: fields.unique(cmp.Or(camel(pt.Name), "p")),
			})
		}
		fv.Recheck = ambiguous(rc.Pattern)
		v.allChans = append(v.allChans, &chanView{famView: fv, Chan: c, Base: x})
	}
	return nil
}

// bytesEncoding reports whether messages of the encoding are bytes,
// passed through undecoded and unchecked.
func bytesEncoding(enc string) bool { return enc == "msgpack" || enc == "binary" }

// msgCodec is how the messages of a channel are encoded: the TypeScript
// type, the encoder (with %s the message), the decoder (with %s the
// received string or Buffer) and the kind of value the schema check
// reads ("" for none).
type msgCodec struct {
	Type, Encode, Decode, Kind string
}

func (c *chanView) codec() msgCodec {
	name := str(c.Name)
	switch c.Encoding {
	case "json":
		t := "unknown"
		var root any
		if len(c.Schema) > 0 && json.Unmarshal(c.Schema, &root) == nil {
			t = schemaType(root, root, 0, nil)
		}
		return msgCodec{t, "keyregEncodeJSON(" + name + ", %s)", "keyregDecodeJSON(" + name + ", keyregString(%s)) as " + c.Base + "Message", "json"}
	case "text":
		return msgCodec{"string", "keyregEncodeText(" + name + ", %s)", "keyregString(%s)", "text"}
	case "int":
		return msgCodec{"number | bigint", "keyregEncodeInt(" + name + ", %s)", "keyregDecodeInt(" + name + ", keyregString(%s))", "number"}
	case "float":
		return msgCodec{"number", "keyregEncodeFloat(" + name + ", %s)", "keyregDecodeFloat(" + name + ", keyregString(%s))", "number"}
	}
	if bytesEncoding(c.Encoding) {
		return msgCodec{"Uint8Array", "keyregEncodeBytes(" + name + ", %s)", "keyregBytes(%s)", ""}
	}
	// Several encodings, or none declared: the string passes through.
	return msgCodec{"string", "keyregEncodeText(" + name + ", %s)", "keyregString(%s)", ""}
}

// checked reports whether the channel's messages are checked against its
// schema.
func (c *chanView) checked() bool { return len(c.Schema) > 0 && c.codec().Kind != "" }

func (c *chanView) modeDoc() string {
	switch c.Chan.Mode {
	case registry.ModeSharded:
		return "sharded: published with SPUBLISH only, subscribed with SSUBSCRIBE; a message stays on its slot's shard"
	case registry.ModePattern:
		return "pattern: published with PUBLISH to one concrete channel, subscribed with PSUBSCRIBE of the subscribe glob"
	}
	return "classic: PUBLISH and SUBSCRIBE (on a Cluster, every message is copied to every node)"
}

func (v *view) writeChannel(b *bytes.Buffer, c *chanView, client string) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	cn, x, name := c.Const, c.Base, str(c.Name)
	p("\n// ---- channel %s ----\n\n", comment(c.Name))
	p("/** The pattern of %s channel names in keys.yaml. */\n", comment(c.Name))
	p("export const %s_PATTERN = %s;\n", cn, str(c.Pattern.Source))
	p("/** The team that owns the %s channel. */\n", comment(c.Name))
	p("export const %s_OWNER = %s;\n", cn, str(c.Owner))
	p("/** The mode of the %s channel: classic, sharded or pattern. */\n", comment(c.Name))
	p("export const %s_MODE = %s;\n", cn, str(c.Chan.Mode))
	p("/** The encoding of %s messages. */\n", comment(c.Name))
	p("export const %s_ENCODING = %s;\n", cn, str(c.Encoding))
	if c.Chan.Mode == registry.ModePattern {
		p("/** The glob subscribers of %s pass to PSUBSCRIBE. */\n", comment(c.Name))
		p("export const %s_SUBSCRIBE_GLOB = %s;\n", cn, str(c.Chan.SubscribeGlob))
	}
	p("\n/**\n * The name of a %s channel, parsed.\n", comment(c.Name))
	v.channelDoc(b, c)
	p(" */\n")
	v.writeKeyCode(b, c.famView, keyNames{Type: c.Ident, String: c.Ident + "String", Guard: "is" + c.Ident, What: "channel"})

	mc := c.codec()
	p("\n/** A message of the %s channel", comment(c.Name))
	switch {
	case bytesEncoding(c.Encoding):
		p(" (%s: bytes, passed through undecoded and unchecked)", comment(c.Encoding))
	case c.Encoding == "json" && len(c.Schema) > 0:
		p(", from its JSON Schema")
	}
	p(". */\nexport type %sMessage = %s;\n", x, mc.Type)
	if client == ClientNone {
		return
	}
	if c.checked() {
		p("\nconst keyregSchema%s: KeyregSchema = JSON.parse(%s);\n", c.Ident, str(string(c.Schema)))
		p("\n/** Checks a message of %s (for json, decoded) against the channel's JSON Schema: a SchemaError names the JSON pointer, never the message. */\n", comment(c.Name))
		p("export function check%sMessage(message: unknown): void {\n  keyregCheck(%s, keyregSchema%s, message, \"message \");\n}\n", x, name, c.Ident)
	}
	p("\n/** A message received on a %s channel: the channel's name parsed, and the message decoded", comment(c.Name))
	if c.checked() {
		p(" and checked")
	}
	p(". */\nexport interface %sDelivery {\n  readonly channel: %s;\n  readonly message: %sMessage;\n}\n", x, c.Ident, x)

	// publish
	ps, as := c.params(), c.args()
	cmd, fn := "PUBLISH", "keyregPublish"
	if c.Chan.Mode == registry.ModeSharded {
		cmd, fn = "SPUBLISH", "keyregSPublish"
	}
	p("\n/**\n * Encodes message")
	if c.checked() {
		p(", checks it against the channel's schema")
	}
	p(" and publishes it to the %s channel with %s,\n", comment(c.Name), cmd)
	p(" * returning the number of receivers the server reports. A refused value or\n")
	p(" * message throws (an InvalidKeyError, InvalidValueError or SchemaError) and\n * sends nothing.")
	if c.Chan.Mode == registry.ModePattern {
		p(" A pattern channel is published to the one concrete\n * channel its values name.")
	}
	if d := c.Deprecated; d != nil {
		p("\n *\n * @deprecated %s", prose(channelDeprecation(d)))
	}
	p("\n */\n")
	p("export async function publish%s(client: KeyregClient%s, message: %sMessage): Promise<number> {\n", x, ps, x)
	p("  const channel = build%s(%s);\n", c.Ident, as)
	p("  const data = %s;\n", fmt.Sprintf(mc.Encode, "message"))
	if c.checked() {
		p("  keyregCheck(%s, keyregSchema%s, keyregStored(data, %s), \"message \");\n", name, c.Ident, str(mc.Kind))
	}
	p("  return %s(client, channel, data);\n}\n", fn)

	// subscribe
	sub, target := "subscribe", ""
	switch c.Chan.Mode {
	case registry.ModeSharded:
		sub = "ssubscribe"
	case registry.ModePattern:
		sub, target = "psubscribe", cn+"_SUBSCRIBE_GLOB"
	}
	p("\n/**\n * Subscribes to the %s channel with %s", comment(c.Name), strings.ToUpper(sub))
	if target != "" {
		p(" of %s_SUBSCRIBE_GLOB", cn)
	}
	p(" and resolves once the\n * server confirmed the subscription, to the function that unsubscribes. Each\n")
	p(" * message is decoded")
	if c.checked() {
		p(", checked against the channel's schema")
	}
	p(" and its channel name parsed\n * before onMessage gets it; a message that fails (an InvalidValueError,\n")
	p(" * SchemaError or InvalidKeyError), and an error thrown by onMessage, go to\n")
	p(" * onError (dropped without it), and the subscription continues.\n")
	p(" *\n * %s\n", subscriberDoc(client, c.Chan.Mode))
	if d := c.Deprecated; d != nil {
		p(" *\n * @deprecated %s\n", prose(channelDeprecation(d)))
	}
	p(" */\n")
	sps := ps
	if target != "" {
		sps = ""
	}
	p("export async function subscribe%s(subscriber: KeyregSubscriber%s, onMessage: (d: %sDelivery) => void, onError?: (e: Error) => void): Promise<() => Promise<void>> {\n", x, sps, x)
	if target == "" {
		p("  const channel = build%s(%s);\n", c.Ident, as)
		target = "channel"
	}
	p("  return keyregSubscribe(subscriber, %s, %s, %t, (name, raw) => {\n", str(sub), target, bytesEncoding(c.Encoding))
	p("    let d: %sDelivery;\n    try {\n", x)
	p("      const parsed = parse%s(name);\n", c.Ident)
	p("      const message = %s;\n", fmt.Sprintf(mc.Decode, "raw"))
	if c.checked() {
		p("      keyregCheck(%s, keyregSchema%s, message, \"message \");\n", name, c.Ident)
	}
	p("      d = { channel: parsed, message };\n")
	p("    } catch (e) {\n      onError?.(keyregError(e));\n      return;\n    }\n")
	p("    try {\n      onMessage(d);\n    } catch (e) {\n      onError?.(keyregError(e));\n    }\n  });\n}\n")
}

func (v *view) channelDoc(b *bytes.Buffer, c *chanView) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if c.Description != "" {
		p(" *\n * %s\n", prose(c.Description))
	}
	p(" *\n * Pattern: %s\n * Owner: %s\n * Mode: %s\n", comment(c.Pattern.Source), comment(c.Owner), comment(c.modeDoc()))
	if c.Chan.Mode == registry.ModePattern {
		p(" * Subscribe glob: %s\n", comment(c.Chan.SubscribeGlob))
	}
	if d := c.Deprecated; d != nil {
		p(" *\n * @deprecated %s\n", prose(channelDeprecation(d)))
	}
}

func channelDeprecation(d *codegen.Deprecation) string {
	s := deprecation(d.Since, d.Sunset, "", d.Reason)
	if d.ReplacedBy != "" {
		s = strings.TrimSuffix(s, "The family is deprecated in keys.yaml.")
		s = "Replaced by " + d.ReplacedBy + ". " + s
	}
	if strings.HasSuffix(s, "The family is deprecated in keys.yaml.") {
		s = strings.TrimSuffix(s, "The family is deprecated in keys.yaml.") + "The channel is deprecated in keys.yaml."
	}
	return s
}

// subscriberDoc says which client a subscriber needs.
func subscriberDoc(client, mode string) string {
	if client == ClientIORedis {
		s := "subscriber is an ioredis Redis connection used for nothing but subscriptions (a subscribed connection runs no other command), or a Cluster"
		if mode == registry.ModeSharded {
			s += " created with shardedSubscribers: true (so SSUBSCRIBE goes to the slot's master)"
		}
		return s + "."
	}
	return "subscriber is a node-redis client used for nothing but subscriptions (client.duplicate(), connected: a subscribed client runs no other command), or a cluster client (createCluster), which keeps its own subscriber connections."
}

// channelSignatures returns the signatures of a channel's builder,
// publisher and subscriber, as the file declares them.
func (c *chanView) signatures(client string) codegen.ChannelFuncs {
	x := c.Base
	var f codegen.ChannelFuncs
	f.Build = c.signature()
	if client == ClientNone {
		return f
	}
	ps := c.params()
	f.Publish = "publish" + x + "(client: KeyregClient" + ps + ", message: " + x + "Message): Promise<number>"
	if c.Chan.Mode == registry.ModePattern {
		ps = ""
	}
	f.Subscribe = "subscribe" + x + "(subscriber: KeyregSubscriber" + ps + ", onMessage: (d: " + x + "Delivery) => void, onError?: (e: Error) => void): Promise<() => Promise<void>>"
	return f
}

// ChannelFuncs returns, by channel name, the signatures of each channel's
// builder, publisher and subscriber (the last two empty with ClientNone),
// as the catalogue shows them.
func (g Generator) ChannelFuncs(req *codegen.Request) (map[string]codegen.ChannelFuncs, error) {
	client := cmp.Or(g.Client, ClientRedis)
	v, err := newView(req)
	if err != nil {
		return nil, err
	}
	out := make(map[string]codegen.ChannelFuncs, len(v.allChans))
	for _, c := range v.allChans {
		f := c.signatures(client)
		if g.Namespace != "" {
			for _, s := range []*string{&f.Build, &f.Publish, &f.Subscribe} {
				if *s != "" {
					*s = g.Namespace + "." + *s
				}
			}
		}
		out[c.Name] = f
	}
	return out, nil
}

// writePubSubRuntime writes the client's Pub/Sub runtime: the publisher
// of the modes the file's channels use (a file whose channels are all
// sharded has no way to send PUBLISH) and the subscriber.
func (v *view) writePubSubRuntime(b *bytes.Buffer, client string) {
	classic, sharded := false, false
	for _, c := range v.chans {
		if c.Chan.Mode == registry.ModeSharded {
			sharded = true
		} else {
			classic = true
		}
	}
	if !classic && !sharded {
		return
	}
	switch client {
	case ClientRedis:
		b.WriteString(pubsubRedisRuntime)
	case ClientIORedis:
		b.WriteString(pubsubIORedisRuntime)
	}
	b.WriteString(pubsubRuntime)
	if classic {
		b.WriteString("\n/** Publishes data to a classic channel (PUBLISH); returns the receivers. */\n")
		b.WriteString("async function keyregPublish(c: KeyregClient, channel: string, data: string | Buffer): Promise<number> {\n")
		b.WriteString("  return Number(await keyregSend(c, channel, [\"PUBLISH\", channel, data]));\n}\n")
	}
	if sharded {
		b.WriteString("\n/** Publishes data to a sharded channel (SPUBLISH, routed to the channel's slot); returns the receivers. */\n")
		b.WriteString("async function keyregSPublish(c: KeyregClient, channel: string, data: string | Buffer): Promise<number> {\n")
		b.WriteString("  return Number(await keyregSend(c, channel, [\"SPUBLISH\", channel, data]));\n}\n")
	}
}
