package golang

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// chanView is one Pub/Sub channel as the template needs it. The embedded
// famView carries what a channel shares with a family (name, pattern,
// owner, encoding, schema, doc) and writes the channel name's builder and
// parser with the key builder's template: its Ident and KeyType are
// "<X>Channel", so the builder is Build<X>Channel and the type <X>Channel.
type chanView struct {
	*famView
	Base          string // <X>: Publish<X>, Subscribe<X>, <X>Message, …
	Mode          string // classic, sharded or pattern, quoted
	ModeRaw       string
	Sharded       bool   // SPUBLISH and SSUBSCRIBE
	PatternMode   bool   // PSUBSCRIBE of SubscribeGlob
	SubscribeGlob string // quoted, for pattern mode
	GlobRaw       string
	// Message is the name of the message type, <X>Message; MsgType is the
	// type the functions take and return (Message, unless the schema made
	// it a pointer, as for a nullable enum), and Alias the type Message
	// stands for when the schema gives no named type of its own.
	Message string
	MsgType string
	Alias   string
	// Doc comments of Publish<X>, Subscribe<X> and Receive, unescaped.
	PublishDoc, SubscribeDoc, ReceiveDoc []string

	channel *registry.Channel
}

// channelScopeNames are the names, besides the placeholder arguments, that
// the generated channel functions taking placeholder values declare or
// refer to (Publish<X> and Subscribe<X>, on top of the builder's
// scopeNames). TestChannelScopeNames derives them from the generated code.
// They apply to channel arguments only, so that no family's argument
// changes name.
var channelScopeNames = []string{"data", "msg", "ps", "sub"}

// channelArgScope is argScope with channelScopeNames.
func channelArgScope() map[string]bool {
	taken := argScope()
	for _, n := range channelScopeNames {
		taken[n] = true
	}
	return taken
}

// channelDerived lists the package-level identifiers of a channel whose
// base identifier is id. The message type's name comes last: the schema's
// type generator takes it.
func channelDerived(id string) []string {
	c := id + "Channel"
	return []string{
		c, "Build" + c, "MustBuild" + c, "Parse" + c, c + "Pattern", c + "Owner", c + "Mode", c + "Encoding",
		c + "SubscribeGlob", "Publish" + id, "Subscribe" + id, id + "Subscription", id + "Delivery",
		"keyregParts" + c, "keyregSchema" + c, id + "Message",
	}
}

// channelViews chooses the identifiers of every channel of reg, after the
// families' (so a family's names never change when a channel is added),
// and generates the message types.
func channelViews(reg *registry.Registry, v *fileView, names *namer) error {
	chans := slices.Clone(reg.Channels)
	for _, c := range chans {
		if c.Pattern == nil || len(c.Pattern.Parts) == 0 {
			return fmt.Errorf("channel %q has no valid pattern", c.Name)
		}
		for _, pt := range c.Pattern.Parts {
			if _, ok := typeConsts[pt.Type]; pt.IsPlaceholder() && !ok {
				return fmt.Errorf("channel %q: placeholder %q has an unknown type", c.Name, pt.Name)
			}
		}
		switch c.Mode {
		case "", registry.ModeClassic, registry.ModeSharded: // "": not declared, as registry.Load reads it
		case registry.ModePattern:
			if c.SubscribeGlob == "" {
				return fmt.Errorf("channel %q has mode pattern but no subscribe_glob", c.Name)
			}
		default:
			return fmt.Errorf("channel %q has an unknown mode %q", c.Name, c.Mode)
		}
	}
	slices.SortFunc(chans, func(a, b *registry.Channel) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range chans {
		f := &c.Family
		base := exported(c.Name)
		if base == "" {
			base = "Channel"
		}
		id := base
		for i := 2; !names.free(channelDerived(id)...); i++ {
			id = base + strconv.Itoa(i)
		}
		d := channelDerived(id)
		names.take(d[:len(d)-1]...)
		fv := &famView{
			family:     f,
			Name:       c.Name,
			Ident:      id + "Channel",
			KeyType:    id + "Channel",
			Noun:       "channel name",
			Doc:        wrap(sentence(f.Description), 76),
			Pattern:    strconv.Quote(f.Pattern.Source),
			PatternRaw: f.Pattern.Source,
			Owner:      strconv.Quote(f.Owner),
			OwnerRaw:   f.Owner,
			Encoding:   strconv.Quote(f.Encoding),
		}
		patternParams(fv, f.Pattern, channelArgScope())
		mode := cmp.Or(c.Mode, registry.ModeClassic)
		cv := &chanView{
			famView: fv, Base: id, Mode: strconv.Quote(mode), ModeRaw: mode,
			Sharded: mode == registry.ModeSharded, PatternMode: mode == registry.ModePattern,
			Message: id + "Message", channel: c,
		}
		if cv.PatternMode {
			cv.SubscribeGlob, cv.GlobRaw = strconv.Quote(c.SubscribeGlob), c.SubscribeGlob
		}
		// The message is a string family's value.
		g := &typeGen{names: names, family: c.Name, of: "channel", base: cv.Message}
		valueType(fv, f, g, cv.Message, cv.Message)
		fv.types = g.decls
		switch {
		case fv.Codec == "bytes" && f.Encoding == "msgpack":
			fv.ValueDoc = "Messages are msgpack; Publish" + id + " and Receive pass their bytes through undecoded and unchecked."
		case fv.Codec == "bytes":
			fv.ValueDoc = "Publish" + id + " and Receive pass the bytes of messages through undecoded and unchecked."
		default:
			fv.ValueDoc = strings.Replace(fv.ValueDoc, "The family declares no schema, so values are", "The channel declares no schema, so messages are", 1)
		}
		fv.Schema, fv.SchemaVar = checkedSchema(fv, f), "keyregSchema"+fv.Ident
		if fv.Schema == "" {
			fv.SchemaVar = ""
		}
		switch {
		case fv.ValueType == cv.Message:
			cv.MsgType = cv.Message
		case names.free(cv.Message):
			names.take(cv.Message)
			cv.MsgType, cv.Alias = cv.Message, fv.ValueType
		default:
			// The schema's types took the name (a nullable enum is
			// *<X>Message): the functions take the type as it is.
			cv.MsgType = fv.ValueType
		}
		cv.docs()
		v.Channels = append(v.Channels, cv)
	}
	return nil
}

// docs writes the doc comments of the channel's functions.
func (cv *chanView) docs() {
	checked := ""
	if cv.Schema != "" {
		checked = " and checked"
	}
	pub := "Publish" + cv.Base + " encodes msg"
	if cv.Schema != "" {
		pub += ", checks it against the channel's schema"
	}
	named := " channel named by the values"
	if len(cv.Params) == 0 {
		named = " channel"
	}
	pub += " and publishes it to the " + cv.Name + named + ", with "
	if cv.Sharded {
		pub += "SPUBLISH: the channel is sharded, and nothing in this file publishes it with PUBLISH. " +
			"It returns the number of subscribers that received it on the shard of the channel's slot."
	} else {
		pub += "PUBLISH. It returns the number of subscribers that received it."
	}
	if cv.Schema != "" {
		pub += " A message that breaks the schema is an error wrapping ErrSchema, and nothing is sent."
	}
	if len(cv.Params) > 0 {
		pub += " A value that does not fit its placeholder is an error wrapping ErrInvalidKey, and nothing is sent."
	}
	cv.PublishDoc = wrap(pub, 76)
	if cv.PatternMode {
		cv.PublishDoc = append(cv.PublishDoc, "")
		cv.PublishDoc = append(cv.PublishDoc, wrap("Subscribers take the channel with PSUBSCRIBE of "+cv.Ident+
			"SubscribeGlob; a message is published to one channel name.", 76)...)
	}
	sub := "Subscribe" + cv.Base + " subscribes to the " + cv.Name + " channel"
	switch {
	case cv.PatternMode:
		sub += "s, with PSUBSCRIBE of " + cv.Ident + "SubscribeGlob."
	case cv.Sharded:
		sub += strings.TrimPrefix(named, " channel") + ", with SSUBSCRIBE (on a cluster, on the node that serves the channel's slot)."
	default:
		sub += strings.TrimPrefix(named, " channel") + ", with SUBSCRIBE."
	}
	sub += " It returns once the server has confirmed the subscription, so a message published after it returns is received."
	if !cv.PatternMode && len(cv.Params) > 0 {
		sub += " A value that does not fit its placeholder is an error wrapping ErrInvalidKey."
	}
	cv.SubscribeDoc = wrap(sub, 76)
	cv.SubscribeDoc = append(cv.SubscribeDoc, "")
	cv.SubscribeDoc = append(cv.SubscribeDoc, wrap("c is a *redis.Client or a *redis.ClusterClient; the subscription takes a connection of its own.", 76)...)
	rcv := "Receive waits for the next message and returns it decoded" + checked + ". A message that does not decode (ErrInvalidValue)"
	if cv.Schema != "" {
		rcv += ", breaks the schema (ErrSchema)"
	}
	rcv += " or arrived on a channel name that does not parse as " + cv.Ident + "Pattern (ErrInvalidKey) is returned as an error, " +
		"and the subscription stays usable: the next Receive returns the next message. " +
		"An error of the connection or of ctx is returned as go-redis reports it."
	cv.ReceiveDoc = wrap(rcv, 76)
}

// channelDeprecation is the "Deprecated:" paragraph of a channel: a
// replacement that is a channel or a family this file declares is named
// by its Go type.
func channelDeprecation(d *registry.Deprecation, chans, fams map[string]string) string {
	s := "Deprecated:"
	if !d.Since.IsZero() {
		s += " since " + d.Since.Format(time.DateOnly) + "."
	}
	if !d.Sunset.IsZero() {
		s += " Sunset " + d.Sunset.Format(time.DateOnly) + "."
	}
	if id, ok := chans[d.ReplacedBy]; ok {
		s += " Use " + id + " (channel " + d.ReplacedBy + ")."
	} else if id, ok := fams[d.ReplacedBy]; ok {
		s += " Use " + id + "Key (family " + d.ReplacedBy + ")."
	} else if d.ReplacedBy != "" {
		s += " Replaced by " + d.ReplacedBy + "."
	}
	if d.Reason != "" {
		s += " " + sentence(d.Reason)
	}
	if s == "Deprecated:" {
		s += " the channel is deprecated in keys.yaml."
	}
	return s
}

// Generator is a codegen.ChannelDocumenter: the catalogue shows the
// publishers and subscribers it writes.
var _ codegen.ChannelDocumenter = Generator{}

// ChannelFuncs returns, by channel name, for every channel of req (in
// scope or not), the signatures of the channel name's builder, the
// publisher and the subscriber that Generate writes with the go-redis
// client, qualified by g.Package, such as
// "keys.PublishChat(ctx context.Context, c redis.Cmdable, roomID string, msg keys.ChatMessage) (int64, error)".
// The names depend neither on the scope nor on Client (with --client
// none, only the builder is written).
func (g Generator) ChannelFuncs(req *codegen.Request) (map[string]codegen.ChannelFuncs, error) {
	v, err := newView(req.Registry(), Options{Package: "keys", Client: ClientNone})
	if err != nil {
		return nil, err
	}
	q := func(typ string) string {
		if strings.HasPrefix(typ, "*") {
			return "*" + g.Package + "." + typ[1:]
		}
		if typ != "" && 'A' <= typ[0] && typ[0] <= 'Z' {
			return g.Package + "." + typ
		}
		return typ // string, []byte, json.RawMessage, int64, float64
	}
	out := make(map[string]codegen.ChannelFuncs, len(v.Channels))
	for _, c := range v.Channels {
		var params []string
		for _, p := range c.Params {
			typ := "string"
			if p.Int {
				typ = "int64"
			}
			params = append(params, p.Arg+" "+typ)
		}
		pub := append([]string{"ctx context.Context", "c redis.Cmdable"}, params...)
		pub = append(pub, "msg "+q(c.MsgType))
		sub := []string{"ctx context.Context", "c redis.UniversalClient"}
		if !c.PatternMode {
			sub = append(sub, params...)
		}
		out[c.Name] = codegen.ChannelFuncs{
			Build:     g.Package + ".Build" + c.Ident + "(" + strings.Join(params, ", ") + ") (string, error)",
			Publish:   g.Package + ".Publish" + c.Base + "(" + strings.Join(pub, ", ") + ") (int64, error)",
			Subscribe: g.Package + ".Subscribe" + c.Base + "(" + strings.Join(sub, ", ") + ") (*" + g.Package + "." + c.Base + "Subscription, error)",
		}
	}
	return out, nil
}
