// pprofgen writes real runtime/pprof profiles for pf's pprof reader tests
// (tests/data/pprof/README.md): a CPU profile with labels, a heap profile and an
// allocs profile (whose default sample type is alloc_space, not the last).
//
//	pprofgen DIR [SECONDS]
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink []byte
var keep [][]byte
var acc uint64

// square is small enough to be inlined into its callers.
func square(x uint64) uint64 { return x * x }

//go:noinline
func spin(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s += square(uint64(i)) ^ s>>3
	}
	return s
}

//go:noinline
func workA(n int) uint64 { return spin(n) + 1 }

//go:noinline
func workB(n int) uint64 { return spin(n) + 2 }

//go:noinline
func allocSmall() { sink = make([]byte, 64) }

//go:noinline
func allocLarge() { keep = append(keep, make([]byte, 64<<10)) }

func cpu(seconds float64) {
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		pprof.Do(context.Background(), pprof.Labels("worker", "a"), func(context.Context) {
			for i := 0; i < 3; i++ {
				acc += workA(200000)
			}
		})
		pprof.Do(context.Background(), pprof.Labels("worker", "b"), func(context.Context) {
			acc += workB(200000)
		})
	}
}

func heap() {
	for i := 0; i < 20000; i++ {
		allocSmall()
	}
	for i := 0; i < 64; i++ {
		allocLarge()
	}
}

func write(dir, name string, f func(*os.File) error) {
	out, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out.Close()
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pprofgen DIR [SECONDS]")
		os.Exit(2)
	}
	dir := os.Args[1]
	seconds := 1.0
	if len(os.Args) > 2 {
		seconds, _ = strconv.ParseFloat(os.Args[2], 64)
	}
	runtime.MemProfileRate = 4096
	write(dir, "cpu.pb.gz", func(f *os.File) error {
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		cpu(seconds)
		pprof.StopCPUProfile()
		return nil
	})
	heap()
	runtime.GC()
	write(dir, "heap.pb.gz", func(f *os.File) error { return pprof.Lookup("heap").WriteTo(f, 0) })
	write(dir, "allocs.pb.gz", func(f *os.File) error { return pprof.Lookup("allocs").WriteTo(f, 0) })
	fmt.Println(acc % 2, len(keep))
}
