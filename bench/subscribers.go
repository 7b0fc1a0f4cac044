package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// holdSubscribers opens n classic subscriptions (bench:chan:<i>) and n
// sharded ones (bench:room:{<i>}) on addr, and returns once the server
// has confirmed every one, so that the channel audit of the audit cases
// reads PUBSUB replies of that size. close ends them.
func holdSubscribers(ctx context.Context, addr string, n int) (closeFn func(), err error) {
	c := newClient(addr, 2)
	var subs []*redis.PubSub
	closeFn = func() {
		for _, ps := range subs {
			_ = ps.Close()
		}
		_ = c.Close()
	}
	const batch = 1000
	for kind, open := range map[string]func(context.Context, ...string) *redis.PubSub{"chan": c.Subscribe, "room": c.SSubscribe} {
		for lo := 0; lo < n; lo += batch {
			names := make([]string, 0, batch)
			for i := lo; i < min(lo+batch, n); i++ {
				if kind == "room" {
					names = append(names, "bench:room:{"+strconv.Itoa(i)+"}")
				} else {
					names = append(names, "bench:chan:"+strconv.Itoa(i))
				}
			}
			ps := open(ctx, names...)
			subs = append(subs, ps)
			// One confirmation per channel, in order; the last one's count
			// is the connection's subscriptions.
			for got := 0; got < len(names); got++ {
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				m, err := ps.Receive(rctx)
				cancel()
				if err != nil {
					closeFn()
					return nil, fmt.Errorf("subscribing %s channels: %w", kind, err)
				}
				if _, ok := m.(*redis.Subscription); !ok {
					closeFn()
					return nil, fmt.Errorf("subscribing %s channels: unexpected %T", kind, m)
				}
			}
		}
	}
	return closeFn, nil
}
