package scanner

import (
	"context"
	"strconv"
	"strings"
)

// KeyCount returns the number of keys in the keyspaces a scan walks: the
// keys= counts of INFO keyspace (what DBSIZE answers) of every database
// and cluster shard scanned, summed. It is meant for a progress line: keys
// come and go while a scan runs, and a Match scan walks fewer. It sends
// one INFO keyspace per node, which the minimal ACL allows.
func (c *Conn) KeyCount(ctx context.Context) (int64, error) {
	groups, _, _, err := c.targets(ctx)
	if err != nil {
		return 0, c.redact(err)
	}
	var total int64
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		info, err := g[0].client.Info(ctx, "keyspace").Result()
		if err != nil {
			return 0, c.redact(err)
		}
		fields := infoFields(info)
		for _, t := range g {
			total += keyspaceKeys(fields["db"+strconv.Itoa(t.db)])
		}
	}
	return total, nil
}

// keyspaceKeys reads keys=N from an INFO keyspace value such as
// "keys=12,expires=3,avg_ttl=0"; 0 when it is absent.
func keyspaceKeys(v string) int64 {
	for part := range strings.SplitSeq(v, ",") {
		if n, ok := strings.CutPrefix(part, "keys="); ok {
			k, _ := strconv.ParseInt(n, 10, 64)
			return max(k, 0)
		}
	}
	return 0
}
