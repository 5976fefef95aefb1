package procstat

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// Tick is one clock tick of /proc/PID/stat (USER_HZ, 100 on Linux).
const Tick = 10 * time.Millisecond

// Stat is what the benchmarks read of /proc/PID/stat. Times are in ticks;
// CUTime and CSTime are those of the children the process has waited for.
type Stat struct {
	PID, PPID, PGRP              int
	UTime, STime, CUTime, CSTime int64
}

// Read reads /proc/pid/stat.
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// After the command: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime ...
	if len(f) < 15 {
		return Stat{}, false
	}
	n := func(j int) int64 { v, _ := strconv.ParseInt(f[j], 10, 64); return v }
	return Stat{PID: pid, PPID: int(n(1)), PGRP: int(n(2)), UTime: n(11), STime: n(12), CUTime: n(13), CSTime: n(14)}, true
}

// All reads every process's stat.
func All() []Stat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Stat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := Read(pid); ok {
			out = append(out, s)
		}
	}
	return out
}

// GroupCPU is the user+system time the live processes of group pgid have
// used so far.
func GroupCPU(pgid int) time.Duration {
	var ticks int64
	for _, s := range All() {
		if s.PGRP == pgid {
			ticks += s.UTime + s.STime
		}
	}
	return time.Duration(ticks) * Tick
}

// GroupPIDs lists the processes of group pgid.
func GroupPIDs(pgid int) []int {
	var out []int
	for _, s := range All() {
		if s.PGRP == pgid {
			out = append(out, s.PID)
		}
	}
	return out
}

// TreeCPU is the user+system time used so far by root and every process
// descended from it, the children they have already waited for included,
// so that a helper process that came and went within a measurement still
// counts (once its parent reaped it).
func TreeCPU(root int) time.Duration {
	all := All()
	kids := make(map[int][]int, len(all))
	byPID := make(map[int]Stat, len(all))
	for _, s := range all {
		kids[s.PPID] = append(kids[s.PPID], s.PID)
		byPID[s.PID] = s
	}
	var ticks int64
	seen := map[int]bool{}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s, ok := byPID[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		ticks += s.UTime + s.STime + s.CUTime + s.CSTime
		stack = append(stack, kids[pid]...)
	}
	return time.Duration(ticks) * Tick
}

// LoadAvg is the 1, 5 and 15 minute load averages as /proc/loadavg
// gives them ("0.52 0.61 0.66"), or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
