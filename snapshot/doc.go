// Package snapshot reads Redis RDB files as a stream of key facts, for the
// offline audit (keyreg audit --rdb): every key with its database, type,
// encoding, expiry, LRU idle time or LFU frequency and serialized size,
// and on request a bounded sample of its value. It has no Redis
// connection and reads the file once, front to back, so a pipe will do.
package snapshot
