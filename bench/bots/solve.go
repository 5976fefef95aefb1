package main

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// solve is the native solver a scripted bot uses: challenge.Solve's loop
// (SHA-256 of seed ‖ puzzle index ‖ nonce, the smallest nonce with bits
// leading zero bits, for each sub-puzzle), with the sub-puzzles shared
// out over every core.
func solve(seed [16]byte, nbits, puzzles uint8) []uint64 {
	out := make([]uint64, puzzles)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), int(puzzles)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(puzzles) {
					return
				}
				out[i] = solvePuzzle(seed, nbits, uint32(i))
			}
		}()
	}
	wg.Wait()
	return out
}

func solvePuzzle(seed [16]byte, nbits uint8, i uint32) uint64 {
	var msg [28]byte
	copy(msg[:16], seed[:])
	binary.BigEndian.PutUint32(msg[16:20], i)
	for n := uint64(0); n < challenge.NonceLimit; n++ {
		binary.BigEndian.PutUint64(msg[20:28], n)
		h := sha256.Sum256(msg[:])
		if bits.LeadingZeros32(binary.BigEndian.Uint32(h[:4])) >= int(nbits) {
			return n
		}
	}
	return 0
}

// hashRate measures the native solver's hashes per CPU-second: every core
// hashes for d, and the hashes are divided by the process's CPU time over
// the same span (so it holds however busy the machine is).
func hashRate(d time.Duration) float64 {
	var total atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	c0 := processCPU()
	for w := range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var msg [28]byte
			binary.BigEndian.PutUint32(msg[16:20], uint32(w))
			n := uint64(0)
			for {
				for range 4096 {
					binary.BigEndian.PutUint64(msg[20:28], n)
					sha256.Sum256(msg[:])
					n++
				}
				total.Add(4096)
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	return float64(total.Load()) / (processCPU() - c0).Seconds()
}
