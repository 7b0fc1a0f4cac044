package infer

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

func TestExplore(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	hex := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	uuid := func() string {
		h := hex(32)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	cases := map[string][]string{}
	var k []string
	for range 2500 {
		k = append(k, "sess_"+hex(32))
	}
	for i := range 3000 {
		k = append(k, "v1:user:"+strconv.Itoa(i))
	}
	cases["sess"] = k
	k = nil
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	for _, w := range words {
		for i := range 550 {
			k = append(k, "scratch:"+w+":"+strconv.Itoa(i))
		}
	}
	cases["scratch"] = k
	k = nil
	for i := range 400 {
		for _, l := range []string{"de", "en", "fr", "ja"} {
			k = append(k, "cms:page:"+strconv.Itoa(i)+":"+l)
		}
	}
	cases["locale"] = k
	k = []string{"foo", "x", "test", "asdf"}
	for range 500 {
		k = append(k, "sess_"+hex(32))
	}
	cases["junk-small"] = k
	k = []string{"foo", "x", "test", "asdf", "v2:user:session:12345"}
	for range 3000 {
		k = append(k, "v2:user:session:"+uuid())
	}
	for i := range 3000 {
		k = append(k, "v1:user:"+strconv.Itoa(i))
	}
	cases["names"] = k
	for name, keys := range cases {
		in := New(Options{})
		for _, key := range keys {
			in.Add(Fact{Key: key, Type: "string", TTL: time.Hour, Memory: -1, Len: -1})
		}
		in.Candidates(0)
		d, _, sum := in.Draft()
		fmt.Printf("== %s: %d families\n", name, sum.Families)
		for i, f := range d.Families {
			if i > 8 {
				break
			}
			fmt.Printf("   %s %s %s\n", f.Name, f.Pattern, f.Comment[0])
		}
	}
}
