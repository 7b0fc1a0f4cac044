package fix

import (
	"context"
	"fmt"
	"strconv"

	"example.com/app/keys"
	"github.com/redis/go-redis/v9"
)

func Fix(ctx context.Context, rdb redis.Cmdable, id int, uid int64, sid, cart string) {
	rdb.Get(ctx, "v1:user:"+strconv.Itoa(id)+":profile") // want `built by hand`
	rdb.Get(ctx, fmt.Sprintf("v1:user:%d:profile", uid)) // want `built by hand`
	rdb.HGetAll(ctx, "v1:cart:"+cart)                    // want `built by hand`
	rdb.Get(ctx, "v1:user:session:"+sid)                 // want `built by hand`
	rdb.Get(ctx, "v1:user:42:profile")                   // want `built by hand`
	rdb.Get(ctx, "v1:user:session:"+sid+"")              // want `built by hand`
	rdb.Get(ctx, keys.MustBuildCart(cart))
	rdb.Get(ctx, fmt.Sprint(strconv.Itoa(id))) // unknown shape: no fix
}
