// Package snapshot reads Redis RDB files as a stream of key facts, for the
// offline audit (keyreg audit --rdb): every key with its database, type,
// encoding, expiry, LRU idle time or LFU frequency, serialized size and an
// estimate of its MEMORY USAGE (memory.go),
// and on request a bounded sample of its value. It has no Redis
// connection and reads the file once, front to back, so a pipe will do.
//
// It reads RDB versions 1 to 12 (magic "REDIS") and Valkey's "VALKEY"
// files (version 80 and later). A value that is not sampled is skipped by
// its length framing, in chunks of a fixed buffer, so memory stays flat
// whatever the size of the file or of one value.
//
// Entry.Encoding names the value's encoding in the file: for a string what
// OBJECT ENCODING reports after loading it (int, embstr, raw); otherwise
// linkedlist, ziplist, quicklist (of ziplists), quicklist2 (of listpacks),
// hashtable, intset, listpack, skiplist, zipmap, stream, hash_metadata and
// hash_listpack_ex (7.4 hash field TTLs), hash2 (Valkey 9) or module.
//
// Entry.WantGroups keeps, while a stream is skipped, what XINFO GROUPS and
// XINFO CONSUMERS would have said of its consumer groups when the file was
// saved (pending entries, lag, the longest idle consumer holding entries).
//
// The tests read files saved by real servers: Redis 7.0 (the tests' own
// redis-server, every encoding it writes, under LFU and LRU policies) and
// the fixtures in testdata/servers, saved by Redis 2.8 (RDB 6: ziplist
// and linked lists, string-double zsets), 3.2 (RDB 7: quicklist of
// ziplists), 6.2 (RDB 9: ziplist hashes and zsets, stream v1, LRU idle)
// and 7.4 (RDB 12: listpack sets, stream v3, hash field TTLs), and by
// Valkey 8.0 (RDB 11, valkey-ver AUX), built from the upstream tags.
// Valkey 9's VALKEY magic and hash2 are tested only with constructed files. Zipmap hashes (Redis 2.4 and before), RDB versions 1
// to 5 and module values are tested only with files built in the tests
// from their documented formats.
package snapshot
