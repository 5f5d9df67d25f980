// Prints values of Go's math/rand global source for the value-stability
// tests of partalloc-gpushare's gorand module (opt-in; needs a Go toolchain):
//   go run scripts/fgd-gorand-golden/main.go
package main

import (
	"fmt"
	"math/rand"
)

func main() {
	for _, seed := range []int64{42, 0, -7, 1 << 40} {
		rand.Seed(seed)
		fmt.Printf("seed %d\n", seed)
		fmt.Printf("int %d\n", rand.Int())
		fmt.Printf("int63 %d %d\n", rand.Int63(), rand.Int63())
		fmt.Printf("intn %d %d %d %d\n", rand.Intn(100), rand.Intn(8152), rand.Intn(1<<20), rand.Intn(3000000000))
		fmt.Printf("int63n %d\n", rand.Int63n(1000000000000007))
		fmt.Printf("float64 %v %v\n", rand.Float64(), rand.Float64())
		fmt.Printf("perm %v\n", rand.Perm(12))
		s := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
		rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		fmt.Printf("shuffle %v\n", s)
		p := rand.Perm(1213)
		fmt.Printf("perm1213 %d %d %d\n", p[0], p[606], p[1212])
	}
}
