package registry
import ("testing";"strings")
func BenchmarkZZBaseline(b *testing.B){
	_, keys := benchMatcher(b, 1000)
	b.ResetTimer()
	n := 0
	for i := range b.N { k := keys[i&(len(keys)-1)]; n += strings.IndexByte(k, 'z') + int(k[len(k)-1]) }
	_ = n
}
func BenchmarkZZSmallSet(b *testing.B){
	m, keys := benchMatcher(b, 1000)
	keys = keys[:1024]
	b.ResetTimer()
	for i := range b.N { m.Match(keys[i&1023]) }
}
