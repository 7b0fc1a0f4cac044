// Package cover holds the key and channel arguments the analyzer finds
// beyond the parameter names: MSet's values, Do's command line, the
// argument structs, and Pub/Sub channels (checked against keys-cover.yaml).
package cover

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

type profile struct {
	Name  string `redis:"v1:user:7:profile"`
	Bogus string `redis:"v9:tag,omitempty"`
	Skip  string `redis:"-"`
	None  string
}

func mset(ctx context.Context, rdb *redis.Client, cart string, m map[string]any, p *profile) {
	rdb.MSet(ctx, "v1:user:"+cart, 1, "v9:mset", 2)                    // want `key "v1:user:\{:word\}" has the prefix of family user-profile` `key "v9:mset" matches no family`
	rdb.MSetNX(ctx, []string{"v9:slice", "x", "v1:user:" + cart, "y"}) // want `key "v9:slice" matches no family` `key-shape-mismatch`
	rdb.MSet(ctx, map[string]any{"v9:map": 1, "v1:user:" + cart: 2})   // want `key "v9:map" matches no family` `key-shape-mismatch`
	rdb.MSet(ctx, []any{"v9:any", 1}...)                               // want `key "v9:any" matches no family`
	rdb.MSet(ctx, profile{Name: "x"})                                  // want `key "v9:tag" matches no family`
	rdb.MSet(ctx, p)                                                   // want `key "v9:tag" matches no family`
	rdb.MSet(ctx, m)                                                   // unknown: counted, not reported
	rdb.MSet(ctx, "x", "v9:value-not-key")                             // want `key "x" matches no family`
}

func do(ctx context.Context, rdb *redis.Client, cart string, cmd string, args []any) {
	rdb.Do(ctx, "set", "v9:do-set", "v9:value")                          // want `key "v9:do-set" matches no family`
	rdb.Do(ctx, "GET", "v1:user:"+cart)                                  // want `key-shape-mismatch`
	rdb.Do(ctx, "DEL", "v9:d1", "v9:d2")                                 // want `key "v9:d1" matches no family` `key "v9:d2" matches no family`
	rdb.Do(ctx, "HSET", "v9:h", "v9:field", "v9:value")                  // want `key "v9:h" matches no family`
	rdb.Do(ctx, "MSET", "v9:m1", "v", "v9:m2", "v")                      // want `key "v9:m1" matches no family` `key "v9:m2" matches no family`
	rdb.Do(ctx, "BLPOP", "v9:b1", "v9:b2", 5)                            // want `key "v9:b1" matches no family` `key "v9:b2" matches no family`
	rdb.Do(ctx, "EVAL", "return 1", 1, "v9:e1", "v9:arg")                // want `key "v9:e1" matches no family`
	rdb.Do(ctx, "ZUNIONSTORE", "v9:dst", 2, "v9:z1", "v9:z2", "WEIGHTS") // want `key "v9:dst" matches no family` `key "v9:z1" matches no family` `key "v9:z2" matches no family`
	rdb.Do(ctx, []any{"EXPIRE", "v9:lit", 10}...)                        // want `key "v9:lit" matches no family`
	rdb.Do(ctx, "PING", "v9:not-a-key")
	rdb.Do(ctx, "OBJECT", "ENCODING", "v9:unknown-command") // unknown: counted, not reported
	rdb.Do(ctx, cmd, "v9:computed-command")                 // unknown: counted, not reported
	rdb.Do(ctx, args...)
}

func structs(ctx context.Context, rdb *redis.Client, shard int) {
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "v1:events:" + strconv.Itoa(shard), Values: []any{"k", "v"}})
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "v9:stream", Values: map[string]any{"k": "v"}}) // want `key "v9:stream" matches no family`
	args := &redis.XAddArgs{Stream: "v1:evnts:1"}                                         // want `key "v1:evnts:1" matches no family`
	rdb.XAdd(ctx, args)
	later := &redis.XAddArgs{Stream: "v9:replaced"}
	later.Stream = "v1:events:" + strconv.Itoa(shard)
	rdb.XAdd(ctx, later)                                                                                      // unknown: its Stream is set after the literal
	rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{"v1:events:1", "v9:s2", "0", "v9:not-a-key"}})          // want `key "v9:s2" matches no family`
	rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "v9:g", Consumer: "c", Streams: []string{"v9:rg", ">"}}) // want `key "v9:rg" matches no family`
	rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "v9:claim", Group: "g", Consumer: "c", Start: "0"})     // want `key "v9:claim" matches no family`
	rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "v9:zr", Start: 0, Stop: -1})                                   // want `key "v9:zr" matches no family`
	rdb.ZInterStore(ctx, "v9:zdst", &redis.ZStore{Keys: []string{"v9:zk", "v1:events:2"}})                    // want `key "v9:zdst" matches no family` `key "v9:zk" matches no family`
	rdb.JSONMSetArgs(ctx, []redis.JSONSetArgs{{Key: "v9:json", Path: "$", Value: 1}})                         // want `key "v9:json" matches no family`
	rdb.ZRangeStore(ctx, "v9:zrs", redis.ZRangeArgs{Key: "v9:zsrc"})                                          // want `key "v9:zrs" matches no family` `key "v9:zsrc" matches no family`
	rdb.TSIncrBy(ctx, "v9:ts", 1)                                                                             // want `key "v9:ts" matches no family`
	rdb.ClientKillByFilter(ctx, "TYPE", "normal")                                                             // filters, not keys
	rdb.ZAdd(ctx, "v9:zadd", redis.Z{Score: 1, Member: "v9:member-not-key"})                                  // want `key "v9:zadd" matches no family`
}

func channels(ctx context.Context, rdb *redis.Client, ps *redis.PubSub, room int, topic string) {
	rdb.Publish(ctx, "v1:news:"+topic, "m")
	rdb.Publish(ctx, "v1:cart:x", "m")          // want `channel "v1:cart:x" of PUBLISH matches no channel of the registry \(channel-unregistered\)`
	rdb.Publish(ctx, "v9:nothing", "v1:cart:x") // want `channel "v9:nothing" of PUBLISH matches no channel`
	rdb.SPublish(ctx, "v1:chat:room:{"+strconv.Itoa(room)+"}", "m")
	rdb.Publish(ctx, "v1:chat:room:{7}", "m")            // want `PUBLISH on channel room-events, declared sharded: use SPUBLISH \(channel-mode-mismatch\)`
	rdb.SPublish(ctx, "v1:news:sport", "m")              // want `SPUBLISH on channel news, declared classic: use PUBLISH \(channel-mode-mismatch\)`
	rdb.Publish(ctx, "v0:news", "m")                     // want `channel "v0:news" is of the deprecated channel old-news, replaced by news \(channel-deprecated\)`
	rdb.Subscribe(ctx, "v1:news:a", "v9:sub")            // want `channel "v9:sub" of SUBSCRIBE matches no channel`
	rdb.SSubscribe(ctx, "v1:chat:room:{1}", "v1:news:b") // want `SSUBSCRIBE on channel news, declared classic`
	ps.Subscribe(ctx, "v9:ps")                           // want `channel "v9:ps" of SUBSCRIBE matches no channel`
	rdb.Do(ctx, "PUBLISH", "v1:chat:room:{2}", "m")      // want `PUBLISH on channel room-events, declared sharded`
	rdb.Do(ctx, "spublish", "v9:do-channel", "m")        // want `channel "v9:do-channel" of SPUBLISH matches no channel`
	rdb.SPublish(ctx, "v1:chat:lobby:{7}", "m")          // want `channel "v1:chat:lobby:\{7\}" of SPUBLISH matches no channel`
	rdb.Get(ctx, "v1:news:a")                            // want `key "v1:news:a" matches no family`
}

func doTTL(ctx context.Context, rdb *redis.Client, opt string) {
	const sess = "v1:user:session:0b7f4d6e-8f0a-4a52-9c1e-2f0d5f3b9a10"
	rdb.Do(ctx, "SET", sess, "v")                      // want `SET without a TTL on family user-session, whose policy is max 24h \(key-ttl-policy\)`
	rdb.Do(ctx, "set", sess, "v", "EX", 172800)        // want `SET with a TTL of 48h0m0s on family user-session`
	rdb.Do(ctx, "SET", sess, "v", "nx", "PX", 3600000) // 1h: within the policy
	rdb.Do(ctx, "SET", sess, "v", "KEEPTTL")           // the key's own TTL: not checked
	rdb.Do(ctx, "SET", sess, "v", opt, 10)             // an option not constant: not checked
	rdb.Do(ctx, "EXPIRE", sess, 90000)                 // want `EXPIRE with a TTL of 25h0m0s on family user-session`
	rdb.Do(ctx, "EXPIRE", sess, "90000", "NX")         // want `EXPIRE with a TTL of 25h0m0s`
	rdb.Do(ctx, "PEXPIRE", "v1:user:7:profile", 1000)  // want `PEXPIRE with a TTL of 1s on family user-profile, whose keys must not expire`
	rdb.Do(ctx, "SETEX", sess, 60, "v")                // 1m: within the policy
	rdb.Do(ctx, "PSETEX", sess, 90000000, "v")         // want `PSETEX with a TTL of 25h0m0s on family user-session`
	rdb.Do(ctx, "SETEX", sess, int64(1)<<62, "v")      // seconds that overflow a Duration: not checked
}
