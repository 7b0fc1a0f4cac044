package snapshot

// The in-memory size of a value, as MEMORY USAGE reports it on the server
// that loads the file (Redis 7 with jemalloc, standalone): estimated from
// the decoded value and the encoding Redis gives it on loading, never from
// the compressed bytes in the file. MEMORY USAGE itself extrapolates a
// collection from 5 sampled elements; the estimate counts every element.
// The structure sizes are Redis 7.0's on 64 bits.
const (
	robjSize      = 16 // redisObject
	dictEntrySize = 24
	dictSize      = 56
	quicklistSize = 40
	qlNodeSize    = 40
	zsetSize      = 16 + 32 // zset and zskiplist
	zslHeader     = 640     // the skiplist's header node of 32 levels, allocated
	zslNode       = 53      // a node of 1.33 levels on average, allocated
	streamSize    = 64
	raxNodeSize   = 32 // per stream listpack: its rax node and 16-byte key, roughly
)

// jemalloc is the size jemalloc allocates for n bytes: its size classes,
// four per doubling above 128 bytes, 16-byte steps up to 128, 8 below.
func jemalloc(n int64) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	case n > 1<<60:
		return n // no allocation is that large: a header's claim, as is
	}
	// The power of two at or above n, and a quarter of the one below.
	p := int64(1)
	for p < n {
		p <<= 1
	}
	step := p >> 3
	return (n + step - 1) / step * step
}

// sdsAlloc is what an sds string of n bytes takes, made by sdsnewlen.
func sdsAlloc(n int64) int64 {
	if n > 1<<60 {
		return n
	}
	var hdr int64
	switch {
	case n < 1<<5:
		hdr = 1
	case n < 1<<8:
		hdr = 3
	case n < 1<<16:
		hdr = 5
	case n < 1<<32:
		hdr = 9
	default:
		hdr = 17
	}
	return jemalloc(hdr + n + 1)
}

// dictSlots is the table size of a dict of n entries loaded at once.
func dictSlots(n int64) int64 {
	s := int64(4)
	for s < n && s < 1<<62 {
		s <<= 1
	}
	return s
}

// keyMemory is what a key adds to its value in MEMORY USAGE: its name and
// the entry of the keyspace's dict.
func keyMemory(key int) int64 { return sdsAlloc(int64(key)) + dictEntrySize }

// estimate sets e.Memory once its value was read: e.mem holds what the
// walk added up per element or node.
func (e *Entry) estimate() {
	t := byte(e.RDBType)
	v := int64(-1)
	switch {
	case t == tString:
		switch {
		case e.Len < 0:
		case e.Encoding == "int":
			v = robjSize
		case e.Encoding == "embstr":
			v = jemalloc(robjSize + 3 + e.Len + 1)
		default:
			v = robjSize + sdsAlloc(e.Len)
		}
	case t == tListQuicklist || t == tListQuicklist2:
		v = robjSize + quicklistSize + e.mem
	case t == tList:
		// Loaded into a quicklist of listpacks of about 8 KiB.
		nodes := max(1, (e.mem+8191)/8192)
		v = robjSize + quicklistSize + nodes*qlNodeSize + jemalloc(e.mem/nodes+7)*nodes
	case t == tSet || t == tHash || t == tHashMetadataPreGA || t == tHashMetadata:
		if e.Len >= 0 {
			v = robjSize + dictSize + 8*dictSlots(e.Len) + e.Len*dictEntrySize + e.mem
		}
	case t == tZset || t == tZset2:
		if e.Len >= 0 {
			v = robjSize + zsetSize + dictSize + 8*dictSlots(e.Len) + zslHeader + e.Len*(dictEntrySize+zslNode) + e.mem
		}
	case t == tStreamListpacks || t == tStreamListpacks2 || t == tStreamListpacks3:
		v = robjSize + streamSize + e.mem
	case e.ulen > 0:
		// One encoded structure (listpack, ziplist, intset, zipmap),
		// allocated as it is in the file once decompressed.
		v = robjSize + jemalloc(e.ulen)
	}
	if v < 0 {
		v = e.Size // a module value, or what no header told: the file's bytes
	}
	e.Memory = v + keyMemory(len(e.Key))
}
