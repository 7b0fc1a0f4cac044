// Package strict holds the key and channel arguments of unknown shape the
// new key sources meet, which --strict reports (with keys-cover.yaml).
package strict

import (
	"context"

	"github.com/redis/go-redis/v9"
)

func unknown(ctx context.Context, rdb *redis.Client, m map[string]any, cmd string, ch string, args *redis.XAddArgs, streams []string) {
	rdb.MSet(ctx, m)                                                   // want `keys cannot be read statically; use generated builders in a literal \(key-unregistered\)`
	rdb.Do(ctx, "OBJECT", "ENCODING", "v1:cart:x")                     // want `the keys of this command cannot be found statically; use its go-redis method \(key-unregistered\)`
	rdb.Do(ctx, cmd, "v1:cart:x")                                      // want `the keys of this command cannot be found statically`
	rdb.Do(ctx, "EVAL", "return 1", len(m), "v1:cart:x")               // want `keys cannot be read statically`
	rdb.Publish(ctx, ch, "m")                                          // want `channel shape cannot be derived statically; use a generated builder \(channel-unregistered\)`
	rdb.XRead(ctx, &redis.XReadArgs{Streams: streams})                 // want `keys cannot be read statically`
	rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{"v1:events:1"}}) // want `keys cannot be read statically`
	rdb.XAdd(ctx, args)                                                // want `keys cannot be read statically`
	rdb.Do(ctx, "PING")
}
