package python

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// chanView is a Pub/Sub channel of the module. Its name's builder and
// parser are a family's (keyCode), on a famView whose names carry the
// Channel suffix: build_x_channel, parse_x_channel, XChannel,
// X_CHANNEL_PATTERN.
type chanView struct {
	c     *codegen.Channel
	fv    *famView // the channel name as a key: snake x_channel, upper X_CHANNEL, key XChannel
	snake string   // x
	camel string   // X
	msg   string   // XMessage
}

// chanDerived are the module-level names a channel's code declares, from
// its identifier s (snake case).
func chanDerived(s string) []string {
	u, c := strings.ToUpper(s), camel(s)
	return []string{
		"build_" + s + "_channel", "parse_" + s + "_channel", c + "Channel", c + "Message", c + "MessageObject", "check_" + s + "_message",
		c + "Delivery", c + "Subscription", c + "AsyncSubscription", "_kr_deliver_" + s,
		"publish_" + s, "apublish_" + s, "subscribe_" + s, "asubscribe_" + s,
		u + "_CHANNEL_PATTERN", u + "_CHANNEL_OWNER", u + "_CHANNEL_MODE", u + "_CHANNEL_ENCODING", u + "_CHANNEL_SUBSCRIBE_GLOB",
		"_KR_RE_" + u + "_CHANNEL", "_KR_SCHEMA_" + u + "_CHANNEL", "_KR_PARTS_" + u + "_CHANNEL",
	}
}

// addChannels names every channel after the families (names never
// depend on the scope) and reads its pattern as a family's.
func (v *view) addChannels() error {
	for _, c := range v.req.Channels {
		switch c.Mode {
		case registry.ModeClassic, registry.ModeSharded, registry.ModePattern:
		default:
			return fmt.Errorf("channel %q: unknown mode %q", c.Name, c.Mode)
		}
		cv := &chanView{c: c}
		base := snake(c.Name)
		for i := 1; ; i++ {
			s := base
			if i > 1 {
				s = base + strconv.Itoa(i)
			}
			names := chanDerived(s)
			if v.free(names) {
				v.take(names)
				cv.snake, cv.camel = s, camel(s)
				break
			}
		}
		cv.msg = cv.camel + "Message"
		f := &codegen.Family{Name: c.Name, InScope: c.InScope, Description: c.Description, Owner: c.Owner, Pattern: c.Pattern,
			Type: "string", Encoding: c.Encoding, Schema: c.Schema, Deprecated: c.Deprecated}
		fv := &famView{f: f, snake: cv.snake + "_channel", upper: strings.ToUpper(cv.snake) + "_CHANNEL", camel: cv.camel + "Channel", key: cv.camel + "Channel", what: "channel"}
		// The publisher's and subscriber's other parameters and locals.
		taken := map[string]bool{"message": true, "name": true, "data": true, "c": true, "p": true, "sub": true}
		for _, pt := range c.Pattern.Parts {
			if !pt.IsPlaceholder() {
				lit := pt.Literal
				if pt.LiteralBase64 != "" {
					b, err := base64.StdEncoding.DecodeString(pt.LiteralBase64)
					if err != nil {
						return fmt.Errorf("channel %q: a literal's bytes: %w", c.Name, err)
					}
					lit = string(b)
				}
				fv.parts = append(fv.parts, part{lit: lit, param: -1})
				continue
			}
			if _, ok := registry.ParsePlaceholderType(pt.Type); !ok {
				return fmt.Errorf("channel %q: placeholder %q has an unknown type", c.Name, pt.Placeholder)
			}
			fv.parts = append(fv.parts, part{param: len(fv.params)})
			fv.params = append(fv.params, param{name: pt.Placeholder, arg: argName(pt.Placeholder, taken), typ: pt.Type, int: pt.Type == "int"})
		}
		if len(fv.parts) == 0 {
			return fmt.Errorf("channel %q has no valid pattern", c.Name)
		}
		cv.fv = fv
		v.chans = append(v.chans, cv)
	}
	return nil
}

// channelTypes declares the message types of the channels in scope, after
// the families' (so that no family's type name depends on the channels).
func (v *view) channelTypes() {
	for _, cv := range v.chans {
		if !cv.c.InScope || len(cv.c.Schema) == 0 || !cv.checked() {
			continue
		}
		var doc any
		if err := json.Unmarshal(cv.c.Schema, &doc); err == nil {
			cv.fv.doc = doc
			// A nullable object's TypedDict cannot be XMessage itself, which
			// is then the alias "XMessageObject | None".
			want := cv.msg
			if _, union := mapOf(doc)["type"].([]any); union {
				want = cv.msg + "Object"
			}
			cv.fv.value = v.schemaType(doc, want, 0, true)
		}
	}
}

// checked reports whether messages are checked against the schema: json
// and text are; msgpack and binary pass through as bytes.
func (cv *chanView) checked() bool {
	switch cv.c.Encoding {
	case "json", "text", "int", "float":
		return true
	}
	return false
}

// argsDecl is the placeholders as parameters: ", room: int".
func (cv *chanView) argsDecl() string {
	var s strings.Builder
	for _, p := range cv.fv.params {
		s.WriteString(", " + p.arg + ": " + p.pyType())
	}
	return s.String()
}

func (cv *chanView) argNames() string {
	var a []string
	for _, p := range cv.fv.params {
		a = append(a, p.arg)
	}
	return strings.Join(a, ", ")
}

// signatures are the builder's, the publisher's and the subscriber's, as
// ChannelFuncs names them.
func (cv *chanView) signatures() codegen.ChannelFuncs {
	sub := "subscribe_" + cv.snake + "(client: Client[Any] | ClusterClient[Any]" + cv.argsDecl() + ") -> " + cv.camel + "Subscription"
	if cv.c.Mode == registry.ModePattern {
		sub = "subscribe_" + cv.snake + "(client: Client[Any] | ClusterClient[Any]) -> " + cv.camel + "Subscription"
	}
	return codegen.ChannelFuncs{
		Build:     cv.fv.signature(),
		Publish:   "publish_" + cv.snake + "(client: Client[Any] | ClusterClient[Any]" + cv.argsDecl() + ", message: " + cv.msg + ") -> int",
		Subscribe: sub,
	}
}

// channel writes a channel's code.
func (v *view) channel(b *strings.Builder, cv *chanView) {
	c, fv := cv.c, cv.fv
	chn := pyStr(c.Name)
	u := fv.upper
	fmt.Fprintf(b, "\n\n# Channel %s (%s).\n", comment(c.Name), comment(c.Mode))
	if c.Description != "" {
		fmt.Fprintf(b, "# %s\n", prose(c.Description))
	}
	fmt.Fprintf(b, "# Pattern: %s\n# Owner: %s\n", comment(c.Pattern.Source), comment(c.Owner))
	if d := c.Deprecated; d != nil {
		fmt.Fprintf(b, "# Deprecated: since %s, sunset %s, replaced by %s: %s\n", comment(d.Since), comment(d.Sunset), comment(d.ReplacedBy), prose(d.Reason))
	}
	fmt.Fprintf(b, "%s_PATTERN: _kr_t.Final = %s\n", u, pyStr(c.Pattern.Source))
	fmt.Fprintf(b, "%s_OWNER: _kr_t.Final = %s\n", u, pyStr(c.Owner))
	fmt.Fprintf(b, "%s_MODE: _kr_t.Final = %s\n", u, pyStr(c.Mode))
	fmt.Fprintf(b, "%s_ENCODING: _kr_t.Final = %s\n", u, pyStr(c.Encoding))
	if c.Mode == registry.ModePattern {
		fmt.Fprintf(b, "%s_SUBSCRIBE_GLOB: _kr_t.Final = %s\n", u, pyStr(c.SubscribeGlob))
	}
	v.keyCode(b, fv)

	// The message type and its check.
	cd := v.codec(fv, fv.value)
	if cd.typ != cv.msg {
		fmt.Fprintf(b, "\n\n%s: _kr_t.TypeAlias = %s\n", cv.msg, pyStr(cd.typ))
		fmt.Fprintf(b, "%s\n", `"""A message of the channel, decoded."""`)
	}
	// The check is written for every schema, as a family's; publish and
	// receive apply it only where the encoding is checked (not msgpack or
	// binary, whose bytes pass through).
	var schemaDoc any
	if c.InScope && len(c.Schema) > 0 && json.Unmarshal(c.Schema, &schemaDoc) == nil {
		fmt.Fprintf(b, "\n\n_KR_SCHEMA_%s: _kr_t.Final[_kr_t.Any] = _kr_json.loads(%s)\n", u, pyStr(string(c.Schema)))
		fmt.Fprintf(b, "\n\ndef check_%s_message(message: object) -> None:\n", cv.snake)
		b.WriteString(`    """Raises SchemaError (a ValueError) naming the JSON pointer, never the
    message, when message (decoded) breaks the channel's schema."""` + "\n")
		fmt.Fprintf(b, "    p = _kr_check(_KR_SCHEMA_%s, _KR_SCHEMA_%s, message, \"#\", 0)\n", u, u)
		fmt.Fprintf(b, "    if p:\n        raise _kr_schema_error(%s, \"\", p)\n", chn)
	}

	// Publishers: the command is written here, per channel, so that a
	// sharded channel's code holds SPUBLISH and nothing else.
	// No registry text goes in a docstring: the deprecation's details are a
	// comment before each function, its docstring says only that it is.
	deprecated, depComment := "", ""
	if d := c.Deprecated; d != nil {
		deprecated = "\n\n    Deprecated: the registry deprecates this channel (see the comment above)."
		depComment = "# Deprecated"
		if d.ReplacedBy != "" {
			depComment += ": replaced by " + comment(d.ReplacedBy)
		}
		depComment += ".\n"
	}
	cmd := "PUBLISH"
	if c.Mode == registry.ModeSharded {
		cmd = "SPUBLISH"
	}
	for _, fl := range []struct{ prefix, def, await, client string }{
		{"", "def", "", "Client[_kr_t.Any] | ClusterClient[_kr_t.Any]"},
		{"a", "async def", "await ", "AsyncClient[_kr_t.Any]"},
	} {
		fmt.Fprintf(b, "\n\n%s%s %spublish_%s(client: %s%s, message: %s) -> int:\n", depComment, fl.def, fl.prefix, cv.snake, fl.client, cv.argsDecl(), cv.msg)
		fmt.Fprintf(b, "    \"\"\"%s the message to the channel of these values, encoded as\n    %s_ENCODING says and checked first: SchemaError, and nothing sent, for one\n    the schema refuses. Returns the number of receivers the server reports.%s\"\"\"\n", cmd, u, deprecated)
		fmt.Fprintf(b, "    name = build_%s(%s)\n    data = %s(message)\n", fv.snake, cv.argNames(), cd.enc)
		b.WriteString(indent(fv.check("data", "message", `""`), "    "))
		if cmd == "SPUBLISH" && fl.prefix == "" {
			// On a cluster, to the slot's primary, following MOVED.
			b.WriteString("    return _kr_spublish(client, name, data)\n")
			continue
		}
		fmt.Fprintf(b, "    c: _kr_t.Any = client  # the stubs leave execute_command untyped\n    return int(%sc.execute_command(%q, name, data))\n", fl.await, cmd)
	}

	// The delivery, the subscriptions and the subscribers.
	fmt.Fprintf(b, "\n\n@_kr_dataclasses.dataclass(frozen=True)\nclass %sDelivery:\n", cv.camel)
	b.WriteString("    \"\"\"A message received on the channel: the channel name parsed, the message decoded and checked.\"\"\"\n\n")
	fmt.Fprintf(b, "    channel: %s\n    message: %s\n", fv.key, cv.msg)
	fmt.Fprintf(b, "\n\ndef _kr_deliver_%s(channel: bytes, data: bytes) -> %sDelivery:\n", cv.snake, cv.camel)
	fmt.Fprintf(b, "    name = parse_%s(channel)\n", fv.snake)
	if cd.dec == "_kr_dec_raw" {
		fmt.Fprintf(b, "    message = data\n")
	} else {
		fmt.Fprintf(b, "    try:\n        message = %s(data)\n    except (ValueError, RecursionError) as e:\n", cd.dec)
		// from None: the decoder's own message may quote the payload.
		fmt.Fprintf(b, "        raise InvalidMessageError(%s + \": a message does not decode as \" + %s + \" (\" + type(e).__name__ + \")\") from None\n", chn, pyStr(c.Encoding))
	}
	if fv.doc != nil {
		fmt.Fprintf(b, "    p = _kr_check(_KR_SCHEMA_%s, _KR_SCHEMA_%s, message, \"#\", 0)\n", u, u)
		fmt.Fprintf(b, "    if p:\n        raise _kr_schema_error(%s, \"a message: \", p)\n", chn)
	}
	fmt.Fprintf(b, "    return %sDelivery(name, message)\n", cv.camel)
	fmt.Fprintf(b, "\n\nclass %sSubscription(_KrSubscription[%sDelivery]):\n", cv.camel, cv.camel)
	b.WriteString("    \"\"\"A subscription to the channel: get_message, iteration, close, a context manager.\"\"\"\n")
	fmt.Fprintf(b, "\n\nclass %sAsyncSubscription(_KrAsyncSubscription[%sDelivery]):\n", cv.camel, cv.camel)
	b.WriteString("    \"\"\"A subscription on redis.asyncio: await get_message, async iteration, await close.\"\"\"\n")

	sub, target, args, what := "SUBSCRIBE", "build_"+fv.snake+"("+cv.argNames()+")", cv.argsDecl(), "the channel of these values"
	switch c.Mode {
	case registry.ModeSharded:
		sub = "SSUBSCRIBE"
	case registry.ModePattern:
		sub, target, args, what = "PSUBSCRIBE", u+"_SUBSCRIBE_GLOB", "", "the registry's subscribe_glob, every channel of the pattern"
	}
	for _, fl := range []struct{ prefix, def, await, client, class string }{
		{"", "def", "", "Client[_kr_t.Any] | ClusterClient[_kr_t.Any]", "Subscription"},
		{"a", "async def", "await ", "AsyncClient[_kr_t.Any]", "AsyncSubscription"},
	} {
		fmt.Fprintf(b, "\n\n%s%s %ssubscribe_%s(client: %s%s) -> %s%s:\n", depComment, fl.def, fl.prefix, cv.snake, fl.client, args, cv.camel, fl.class)
		fmt.Fprintf(b, "    \"\"\"%s to %s, on a connection of its own; returns once the\n    server confirmed it. Each message is decoded and checked: a bad one raises\n    (InvalidKeyError, InvalidMessageError or SchemaError) and the subscription\n    goes on.%s\"\"\"\n", sub, what, deprecated)
		fmt.Fprintf(b, "    sub = %s(_kr_deliver_%s)\n", cv.camel+fl.class, cv.snake)
		fmt.Fprintf(b, "    %ssub._kr_open(client, %q, %s)\n    return sub\n", fl.await, sub, target)
	}
}

// ChannelFuncs names every channel's builder, publisher and subscriber as
// Generate writes them (codegen.ChannelDocumenter).
func (g Generator) ChannelFuncs(req *codegen.Request) (map[string]codegen.ChannelFuncs, error) {
	v, err := newView(req)
	if err != nil {
		return nil, err
	}
	out := make(map[string]codegen.ChannelFuncs, len(v.chans))
	for _, cv := range v.chans {
		f := cv.signatures()
		if g.Module != "" {
			f.Build, f.Publish, f.Subscribe = g.Module+"."+f.Build, g.Module+"."+f.Publish, g.Module+"."+f.Subscribe
		}
		out[cv.c.Name] = f
	}
	return out, nil
}
