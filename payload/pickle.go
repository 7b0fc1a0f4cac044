package payload

import "encoding/binary"

// isPickle reports whether b looks like a Python pickle. Protocols 2 to 5
// start with PROTO (0x80) and the protocol number, which is taken as
// proof. Protocols 0 and 1 have no header, and protocol 0 is ASCII, so for
// them the opcodes are walked: each must be known, its argument must fit,
// the simulated stack must never underflow, and the pickle must end with
// STOP as the last byte, leaving exactly one value. Ordinary text fails
// this almost at once.
func isPickle(b []byte) bool {
	if len(b) >= 2 && b[0] == 0x80 {
		return b[1] >= 2 && b[1] <= 5
	}
	if len(b) < 2 || b[len(b)-1] != '.' {
		return false
	}
	return walkPickle(b)
}

// walkPickle simulates the pickle machine's stack depth over protocol 0
// and 1 opcodes (and the few later ones that can appear without PROTO).
func walkPickle(b []byte) bool {
	depth := 0      // items on the stack
	var marks []int // depth at each MARK, innermost last
	const maxMarks = 1 << 12
	top := func() int { // items above the innermost mark
		if len(marks) == 0 {
			return depth
		}
		return depth - marks[len(marks)-1]
	}
	// popMark removes the innermost mark and the items above it, and
	// reports how many items there were.
	popMark := func() (int, bool) {
		if len(marks) == 0 {
			return 0, false
		}
		n := top()
		depth = marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		return n, true
	}
	// pop checks that n items sit above the innermost mark, pops them and
	// pushes push.
	pop := func(n, push int) bool {
		if top() < n {
			return false
		}
		depth += push - n
		return true
	}
	i := 0
	for i < len(b) {
		op := b[i]
		i++
		var ok bool
		switch op {
		case '.': // STOP
			return i == len(b) && depth == 1 && len(marks) == 0
		case '(': // MARK
			if len(marks) == maxMarks {
				return false
			}
			marks = append(marks, depth)
			ok = true
		case '0': // POP
			ok = pop(1, 0)
		case '1': // POP_MARK
			_, ok = popMark()
		case '2': // DUP
			ok = pop(1, 2)
		case 'N', ')', ']', '}', 0x88, 0x89, 0x8f: // NONE, EMPTY_*, NEWTRUE/FALSE, EMPTY_SET
			ok = pop(0, 1)
		case 'I', 'L', 'F': // INT, LONG, FLOAT: decimal text then newline
			i, ok = line(b, i, isNumberByte)
			ok = ok && pop(0, 1)
		case 'S': // STRING: a quoted repr then newline
			ok = i < len(b) && (b[i] == '\'' || b[i] == '"')
			if ok {
				i, ok = line(b, i, nil)
			}
			ok = ok && pop(0, 1)
		case 'V', 'P': // UNICODE, PERSID
			i, ok = line(b, i, nil)
			ok = ok && pop(0, 1)
		case 'g': // GET
			i, ok = line(b, i, isDigit)
			ok = ok && pop(0, 1)
		case 'p': // PUT
			i, ok = line(b, i, isDigit)
			ok = ok && pop(1, 1)
		case 'c': // GLOBAL: module and name lines
			i, ok = line(b, i, nil)
			if ok {
				i, ok = line(b, i, nil)
			}
			ok = ok && pop(0, 1)
		case 'i': // INST: module and name lines, then args above a mark
			i, ok = line(b, i, nil)
			if ok {
				i, ok = line(b, i, nil)
			}
			if ok {
				_, ok = popMark()
			}
			ok = ok && pop(0, 1)
		case 'K', 'h', 0x82: // BININT1, BINGET, EXT1
			i, ok = skip(b, i, 1)
			ok = ok && pop(0, 1)
		case 'M', 0x83: // BININT2, EXT2
			i, ok = skip(b, i, 2)
			ok = ok && pop(0, 1)
		case 'J', 'j', 0x84: // BININT, LONG_BINGET, EXT4
			i, ok = skip(b, i, 4)
			ok = ok && pop(0, 1)
		case 'G': // BINFLOAT
			i, ok = skip(b, i, 8)
			ok = ok && pop(0, 1)
		case 'q': // BINPUT
			i, ok = skip(b, i, 1)
			ok = ok && pop(1, 1)
		case 'r': // LONG_BINPUT
			i, ok = skip(b, i, 4)
			ok = ok && pop(1, 1)
		case 'U', 'C', 0x8a: // SHORT_BINSTRING, SHORT_BINBYTES, LONG1: 1-byte length
			i, ok = counted(b, i, 1)
			ok = ok && pop(0, 1)
		case 'T', 'X', 'B', 0x8b: // BINSTRING, BINUNICODE, BINBYTES, LONG4: 4-byte length
			i, ok = counted(b, i, 4)
			ok = ok && pop(0, 1)
		case 'Q': // BINPERSID
			ok = pop(1, 1)
		case 'R', 0x81: // REDUCE, NEWOBJ
			ok = pop(2, 1)
		case 'a', 'b': // APPEND, BUILD
			ok = pop(2, 1)
		case 's': // SETITEM
			ok = pop(3, 1)
		case 0x85: // TUPLE1
			ok = pop(1, 1)
		case 0x86: // TUPLE2
			ok = pop(2, 1)
		case 0x87: // TUPLE3
			ok = pop(3, 1)
		case 'e', 'u': // APPENDS, SETITEMS: items above a mark, into the item below
			var n int
			n, ok = popMark()
			ok = ok && top() >= 1 && (op == 'e' || n%2 == 0)
		case 'd', 'l', 't': // DICT, LIST, TUPLE: items above a mark
			var n int
			n, ok = popMark()
			ok = ok && (op != 'd' || n%2 == 0) && pop(0, 1)
		case 'o': // OBJ: class and args above a mark
			var n int
			n, ok = popMark()
			ok = ok && n >= 1 && pop(0, 1)
		default:
			return false
		}
		if !ok {
			return false
		}
	}
	return false
}

// line skips a newline-terminated argument starting at b[i], checking each
// byte with valid when it is non-nil. It returns the index after the
// newline.
func line(b []byte, i int, valid func(byte) bool) (int, bool) {
	for j := i; j < len(b); j++ {
		c := b[j]
		if c == '\n' {
			return j + 1, true
		}
		if valid != nil && !valid(c) {
			return 0, false
		}
	}
	return 0, false
}

// skip skips n bytes of argument.
func skip(b []byte, i, n int) (int, bool) {
	if n > len(b)-i {
		return 0, false
	}
	return i + n, true
}

// counted skips a little-endian length of w bytes and that many bytes.
func counted(b []byte, i, w int) (int, bool) {
	if w > len(b)-i {
		return 0, false
	}
	var n uint64
	if w == 1 {
		n = uint64(b[i])
	} else {
		n = uint64(binary.LittleEndian.Uint32(b[i:]))
	}
	i += w
	if n > uint64(len(b)-i) {
		return 0, false
	}
	return i + int(n), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || c == 'L' ||
		c == 'n' || c == 'a' || c == 'i' || c == 'f' // nan, inf
}
