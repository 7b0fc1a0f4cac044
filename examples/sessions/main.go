// Command sessions writes a user session through the code keyreg generated
// from keys.yaml, reads it back and prints the key's TTL.
//
//	REDIS_URL=redis://localhost:6379 go run ./examples/sessions
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/keyreg/keyreg/examples/keys"
	"github.com/redis/go-redis/v9"
)

func main() {
	log.SetFlags(0)
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://localhost:6379"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		log.Fatalf("sessions: %v", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := run(context.Background(), rdb); err != nil {
		log.Fatalf("sessions: %v", err)
	}
}

func run(ctx context.Context, rdb *redis.Client) error {
	csrf := make([]byte, 32)
	if _, err := rand.Read(csrf); err != nil {
		return err
	}
	now := time.Now().UTC()
	k := keys.UserSessionKey{SessionID: newUUID()}
	v := keys.UserSessionValue{
		UserID:     42,
		CreatedAt:  now.Format(time.RFC3339),
		ExpiresAt:  now.Add(keys.UserSessionMaxTTL).Format(time.RFC3339),
		CsrfToken:  hex.EncodeToString(csrf),
		AuthMethod: keys.UserSessionAuthMethodPassword,
	}
	// Set applies the family's TTL policy: without a ttl argument the key
	// expires after UserSessionMaxTTL; a longer ttl would be refused.
	if err := k.Set(ctx, rdb, v, 30*time.Minute); err != nil {
		return err
	}
	got, err := k.Get(ctx, rdb)
	if err != nil {
		return err
	}
	key, err := k.Build()
	if err != nil {
		return err
	}
	ttl, err := rdb.TTL(ctx, key).Result()
	if err != nil {
		return err
	}
	fmt.Printf("key:    %s\n", key)
	fmt.Printf("user:   %d (%s)\n", got.UserID, got.AuthMethod)
	fmt.Printf("ttl:    %v (policy %v, owner %s)\n", ttl, k.TTLPolicy(), k.Owner())
	return nil
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
