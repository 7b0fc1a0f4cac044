package app

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"example.com/app/consts"
	"example.com/app/keys"
	"github.com/redis/go-redis/v9"
)

func single(ctx context.Context, rdb *redis.Client, id int, sid string, cart string) {
	rdb.Get(ctx, "v1:user:session:"+sid)                 // want `key of family user-session built by hand; use keys.MustBuildUserSession`
	rdb.Get(ctx, "v1:user:"+strconv.Itoa(id)+":profile") // want `key of family user-profile built by hand; use keys.MustBuildUserProfile \(key-handbuilt\)`
	rdb.Get(ctx, fmt.Sprintf("v1:user:%d:profile", id))  // want `key of family user-profile built by hand`
	rdb.Get(ctx, "v1:usr:"+sid)                          // want `key "v1:usr:\{:word\}" matches no family of the registry \(key-unregistered\)`
	rdb.Get(ctx, "v1:user:session:"+strconv.Itoa(id))    // want `key "v1:user:session:\{:int\}" has the prefix of family user-session but does not fit its pattern v1:user:session:\{session_id:uuid\} \(key-shape-mismatch\)`
	rdb.Get(ctx, "v1:user:"+sid)                         // want `key-shape-mismatch`
	rdb.Get(ctx, "v0:cart:"+cart)                        // want `key "v0:cart:\{:word\}" is of the deprecated family old-cart, replaced by cart \(key-deprecated\)` `key of family old-cart built by hand`
	rdb.Get(ctx, consts.CartPrefix+cart)                 // want `key of family cart built by hand; use keys.MustBuildCart`
	rdb.Get(ctx, consts.Bogus+cart)                      // want `key "v9:nothing:\{:word\}" matches no family`
	rdb.Get(ctx, "v1:user:7:profile")                    // want `key of family user-profile built by hand`
	rdb.Get(ctx, "v1:user:x:profile")                    // want `key "v1:user:x:profile" has the prefix of family user-profile`
	rdb.Get(ctx, keys.MustBuildUserProfile(int64(id)))
	k, err := keys.BuildUserSession(sid)
	if err == nil {
		rdb.Get(ctx, k)
	}
	rdb.Get(ctx, sid)                                // unknown: counted, not reported
	rdb.Get(ctx, "v9:nothing")                       //keyreg:ignore key-unregistered fixture of an ignored finding
	rdb.Rename(ctx, "v1:cart:"+cart, "v1:tmp:"+cart) // want `key of family cart` `key "v1:tmp:\{:word\}" matches no family`
}

func variadic(ctx context.Context, rdb *redis.Client, cart string) {
	rdb.Del(ctx, "v9:a", "v1:cart:"+cart)                                          // want `key "v9:a" matches no family` `key of family cart`
	rdb.Exists(ctx, []string{"v9:b"}...)                                           // want `key "v9:b" matches no family`
	rdb.Eval(ctx, "return 1", []string{"v9:c", "v1:cart:" + cart}, "v9:not-a-key") // want `key "v9:c" matches no family` `key of family cart`
}

func ttl(ctx context.Context, rdb *redis.Client, sid string, id int) {
	key := "v1:user:session:" + sid
	rdb.Set(ctx, key, "x", 0)            // want `Set without a TTL on family user-session, whose policy is max 24h \(key-ttl-policy\)`
	rdb.Set(ctx, key, "x", 48*time.Hour) // want `Set with a TTL of 48h0m0s on family user-session`
	rdb.Set(ctx, key, "x", time.Hour)
	rdb.SetNX(ctx, key, "x", 0)        // want `SetNX without a TTL`
	rdb.Expire(ctx, key, 25*time.Hour) // want `Expire with a TTL of 25h0m0s`
	rdb.Expire(ctx, keys.MustBuildUserProfile(int64(id)), time.Hour)
	rdb.Expire(ctx, fmt.Sprintf("v1:user:%d:profile", id), time.Hour) // want `key of family user-profile built by hand` `Expire with a TTL of 1h0m0s on family user-profile, whose keys must not expire`
}

func iface(ctx context.Context, c redis.Cmdable, rdb *redis.Client, cart string) {
	c.HGetAll(ctx, "v9:iface") // want `key "v9:iface" matches no family`
	rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "v9:pipe", "f", 1) // want `key "v9:pipe" matches no family`
		return nil
	})
	rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "v1:cart:"+cart, "f", 1) // want `key of family cart`
		p.Incr(ctx, "v9:tx")                 // want `key "v9:tx" matches no family`
		return nil
	})
}
