package procstat

import (
	"os"
	"os/exec"
	"testing"
)

func TestReadSelf(t *testing.T) {
	s, ok := Read(os.Getpid())
	if !ok {
		t.Fatal("cannot read /proc/self/stat")
	}
	if s.PID != os.Getpid() || s.PPID != os.Getppid() {
		t.Errorf("Read = %+v, want pid %d ppid %d", s, os.Getpid(), os.Getppid())
	}
}

// TreeCPU counts a child that has exited and been waited for: its time
// moves to the parent's cutime/cstime.
func TestTreeCPUCountsReapedChildren(t *testing.T) {
	before := TreeCPU(os.Getpid())
	// A child that burns a little CPU: sh counting to 200000.
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Skipf("sh: %v", err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	after := TreeCPU(os.Getpid())
	if child >= 2*Tick && after-before < child/2 {
		t.Errorf("TreeCPU grew by %v, the reaped child used %v", after-before, child)
	}
}

func TestGroupOfSelf(t *testing.T) {
	s, _ := Read(os.Getpid())
	found := false
	for _, pid := range GroupPIDs(s.PGRP) {
		found = found || pid == os.Getpid()
	}
	if !found {
		t.Errorf("GroupPIDs(%d) misses this process", s.PGRP)
	}
}
