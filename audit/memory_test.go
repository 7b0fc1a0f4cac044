package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// memChildEnv, when set to a Redis URL, makes the test binary run one audit
// of that server as memChild and exit, instead of running the tests.
const memChildEnv = "KEYREG_TEST_MEMORY_CHILD"

// TestMain lets TestSampleMemory run the audit in a child process of its
// own, whose peak RSS (VmHWM) measures that audit alone.
func TestMain(m *testing.M) {
	if url := os.Getenv(memChildEnv); url != "" {
		os.Exit(memChild(url))
	}
	os.Exit(m.Run())
}

// memRegistry declares the hostile keys of TestSampleMemory, each family
// with an encoding, so that every key is due for a sample.
const memRegistry = `version: 1
owners:
  platform: {contact: platform@example.com}
families:
  - {name: feed, description: a list, pattern: "v1:feed:{id}", owner: platform, type: list, encoding: text, ttl: persistent}
  - {name: log, description: a stream, pattern: "v1:log:{id}", owner: platform, type: stream, encoding: text, ttl: persistent}
  - {name: blob, description: a string, pattern: "v1:blob:{id}", owner: platform, type: string, encoding: text, ttl: persistent}
`

// Sizes of TestSampleMemory: the budget the child is given, the big
// element hidden among the first elements of a list and of a stream, and
// the many values just under the per-value limit.
const (
	memBudget  = 8 << 20
	memElement = 32 << 20
	memValues  = 40
	memValue   = 1000000
	memLimit   = 1 << 20 // --max-value-bytes
)

// memResult is what the child reports.
type memResult struct {
	Before, Peak     int64 // VmHWM in bytes after connecting, and at the end
	Sampled, Skipped int64
	Err              string
}

// memChild audits url with the sample budget memBudget and prints a
// memResult as JSON on stdout.
func memChild(url string) int {
	var res memResult
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(res) }()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(memRegistry)}}, "keys.yaml")
	if err != nil {
		res.Err = err.Error()
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := scanner.Connect(ctx, scanner.Options{URL: url, Count: 16, Plan: audit.Plan(reg, false), AllowTouch: true, SampleBudget: memBudget})
	if err != nil {
		res.Err = err.Error()
		return 0
	}
	defer conn.Close()
	res.Before = vmHWM()
	o := audit.Defaults()
	o.Sample, o.MaxValueBytes = 1000, memLimit
	rep, err := audit.Run(ctx, conn, reg, o)
	res.Peak = vmHWM()
	if err != nil {
		res.Err = err.Error()
		return 0
	}
	res.Sampled, res.Skipped = rep.Scan.Sampled, rep.Scan.Skipped
	return 0
}

// vmHWM returns the peak resident set size of this process, in bytes; -1
// when /proc does not tell.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// TestSampleMemory writes the hostile keys of issue 10 item 5 to a real
// server: a list and a stream with a 32 MiB element among their first 10,
// behind enough small elements that MEMORY USAGE scaled to 10 elements
// looks small, and 40 values of ~1 MB. A child process audits it with an
// 8 MiB sample budget and a 1 MiB value limit, and its peak RSS may grow
// by no more than the documented bound: neither big element is kept (the
// reader discards each as it arrives, and both keys are skipped as too
// large), and the 1 MB values are read a budget at a time, not all at once.
func TestSampleMemory(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	c := s.Client(t)
	ctx := context.Background()
	big := strings.Repeat("x", memElement)
	p := c.Pipeline()
	for i := range 5 {
		p.RPush(ctx, "v1:feed:1", fmt.Sprint("item-", i))
		p.XAdd(ctx, &redis.XAddArgs{Stream: "v1:log:1", Values: []any{"f", fmt.Sprint("entry-", i)}})
	}
	p.RPush(ctx, "v1:feed:1", big)
	p.XAdd(ctx, &redis.XAddArgs{Stream: "v1:log:1", Values: []any{"f", big}})
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	big = ""
	p = c.Pipeline()
	for i := range 40000 {
		p.RPush(ctx, "v1:feed:1", fmt.Sprint("item-", i))
		p.XAdd(ctx, &redis.XAddArgs{Stream: "v1:log:1", Values: []any{"f", fmt.Sprint("entry-", i)}})
	}
	value := strings.Repeat("v", memValue)
	for i := range memValues {
		p.Set(ctx, fmt.Sprint("v1:blob:", i), value, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memChildEnv+"="+s.URL())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var res memResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	if res.Err != "" || res.Before <= 0 || res.Peak <= 0 {
		t.Fatalf("child: %+v", res)
	}
	if res.Sampled != memValues || res.Skipped != 2 {
		t.Errorf("sampled %d, skipped %d: want the %d values sampled and the list and stream skipped", res.Sampled, res.Skipped, memValues)
	}
	// The documented bound (docs/audit.md): two waves of values in
	// flight (one batch's being checked while the next batch's are read;
	// --count 16 makes the batches small enough to overlap) and
	// payload.Check's copies of up to four values for each, three times
	// over for the garbage collector's headroom (earlier waves and their
	// copies are garbage not yet collected), plus slack for the rest of
	// the audit. The race detector's shadow memory triples it.
	allowed := int64(3*(2*memBudget+8*memLimit) + 8<<20)
	if raceEnabled {
		allowed *= 3
	}
	growth := res.Peak - res.Before
	t.Logf("peak RSS %d MiB, %d MiB after connecting: grew %.1f MiB (allowed %d MiB)", res.Peak>>20, res.Before>>20, float64(growth)/(1<<20), allowed>>20)
	if growth > allowed {
		t.Errorf("peak RSS grew by %.1f MiB during the audit, over the %d MiB allowed by the %d MiB sample budget", float64(growth)/(1<<20), allowed>>20, memBudget>>20)
	}
}
