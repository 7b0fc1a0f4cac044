package remedy

import (
	"strconv"
	"strings"
)

// slot is the Redis Cluster hash slot of key, honouring {hash tags}.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// crc16 is CRC16-XMODEM, Redis Cluster's key hash.
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i]) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// probeKey returns a key name in the same cluster slot as key, which no
// application writes: "{tag}keyreg:write-probe", with the shortest decimal
// tag of that slot.
func probeKey(key string) string {
	want := slot(key)
	for n := 0; ; n++ {
		tag := strconv.Itoa(n)
		if crc16(tag)%16384 == want {
			return "{" + tag + "}keyreg:write-probe"
		}
	}
}
