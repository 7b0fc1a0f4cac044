// Command benchmod writes the module docs/benchmarks.md times keyreg vet
// on: a go-redis v9 service of about 50,000 lines, with key arguments of
// every shape keyreg vet derives, and its keys.yaml.
//
//	go run ./vet/internal/benchmod DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	packages = 50
	funcs    = 40 // per package; each function is about 25 lines
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchmod DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	must(write(filepath.Join(dir, "go.mod"), "module example.com/bench\n\ngo 1.26.0\n\nrequire github.com/redis/go-redis/v9 v9.23.0\n"))
	must(write(filepath.Join(dir, "keys.yaml"), registry))
	for p := range packages {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"strconv\"\n\t\"time\"\n\n\t\"github.com/redis/go-redis/v9\"\n)\n\n", p)
		for f := range funcs {
			fmt.Fprintf(&b, `// F%[1]d does some work with Redis.
func F%[1]d(ctx context.Context, rdb redis.Cmdable, id int, sid string, xs []int) (int, error) {
	total := 0
	for i, x := range xs {
		if x%%2 == 0 {
			total += x * i
		} else {
			total -= x
		}
	}
	if err := rdb.Set(ctx, "v1:cart:"+sid, total, time.Hour).Err(); err != nil {
		return 0, err
	}
	rdb.Get(ctx, fmt.Sprintf("v1:user:%%d:profile", id))
	rdb.Del(ctx, "v1:user:"+strconv.Itoa(id)+":profile", "v1:cart:"+sid)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "v1:counter:%[1]d")
		p.Expire(ctx, "v1:cart:"+sid, 2*time.Hour)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("f%[1]d: %%w", err)
	}
	return total + len(sid), nil
}

`, f)
		}
		must(write(filepath.Join(dir, fmt.Sprintf("p%d", p), "p.go"), b.String()))
	}
}

const registry = `version: 1
separator: ":"
owners:
  team:
    contact: team@example.com
families:
  - name: user-profile
    description: A user's profile.
    pattern: "v1:user:{user_id:int}:profile"
    owner: team
    type: hash
    ttl: persistent
  - name: cart
    description: A cart.
    pattern: "v1:cart:{cart_id:word}"
    owner: team
    type: hash
    ttl: 30d
`

func write(p, s string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(s), 0o644)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
