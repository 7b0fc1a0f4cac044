package snapshot

// lzfDecode reads an LZF blob of clen compressed bytes that declares ulen
// uncompressed bytes, appends the first min(ulen, limit) uncompressed
// bytes to dst and consumes the whole blob. The output grows only by what
// has been decoded; every back reference and run is checked against the
// declared sizes, so damaged data is a FormatError, never a panic.
func lzfDecode(in *input, clen, ulen, limit int64, dst []byte) ([]byte, error) {
	if clen == 0 || ulen == 0 {
		return dst, &FormatError{Offset: in.offset(), Expected: "an LZF string with non-zero lengths", Found: "a zero length"}
	}
	base := len(dst)
	want := min(ulen, limit)
	left := clen // compressed bytes not read yet
	out := dst
	bad := func(found string) error {
		return &FormatError{Offset: in.offset(), Expected: "valid LZF data", Found: found}
	}
	for int64(len(out)-base) < want {
		if left == 0 {
			return out, bad("the compressed bytes end before the declared length")
		}
		ctrl, err := in.byte("LZF data")
		if err != nil {
			return out, err
		}
		left--
		produced := int64(len(out) - base)
		if ctrl < 32 {
			l := int64(ctrl) + 1
			if l > left {
				return out, bad("a literal run past the compressed bytes")
			}
			if produced+l > ulen {
				return out, bad("a literal run past the declared length")
			}
			b, err := in.next(int(l), "LZF data")
			if err != nil {
				return out, err
			}
			left -= l
			out = append(out, b...)
			continue
		}
		l := int64(ctrl >> 5)
		if left < 1 {
			return out, bad("a back reference past the compressed bytes")
		}
		if l == 7 {
			b, err := in.byte("LZF data")
			if err != nil {
				return out, err
			}
			left--
			l += int64(b)
			if left < 1 {
				return out, bad("a back reference past the compressed bytes")
			}
		}
		l += 2
		b, err := in.byte("LZF data")
		if err != nil {
			return out, err
		}
		left--
		ref := len(out) - (int(ctrl&0x1f)<<8 | int(b)) - 1
		if ref < base {
			return out, bad("a back reference before the start")
		}
		if produced+l > ulen {
			return out, bad("a back reference past the declared length")
		}
		// The reference may overlap what it writes: a run of period
		// len(out)-ref. From ref, every multiple of the period is a
		// copy of it, so each append may take all there is from ref,
		// which doubles each time, rather than go byte by byte.
		for l > 0 {
			k := min(int64(len(out)-ref), l)
			out = append(out, out[ref:ref+int(k)]...)
			l -= k
		}
	}
	if int64(len(out)-base) > want {
		out = out[:base+int(want)]
	}
	if want == ulen {
		if left != 0 {
			return out, bad("compressed bytes after the declared length")
		}
		return out, nil
	}
	return out, in.discard(left, "LZF data")
}
