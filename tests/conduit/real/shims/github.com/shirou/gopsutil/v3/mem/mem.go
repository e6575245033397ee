// Shim: gopsutil v3's mem package over Debian's gopsutil v4
// (golang-github-shirou-gopsutil-dev 4.x ships only .../gopsutil/v4).
//
// Why: conduit-runner (internal/runner/runner.go) imports
// github.com/shirou/gopsutil/v3/mem for mem.VirtualMemory(); v4 has the
// same function and type.  Only that is here.
package mem

// Debian installs v4 at the unversioned path .../gopsutil; build.sh links
// .../gopsutil/v4 to it so that v4's own /v4 imports resolve in GOPATH mode.
import v4 "github.com/shirou/gopsutil/v4/mem"

type VirtualMemoryStat = v4.VirtualMemoryStat

func VirtualMemory() (*VirtualMemoryStat, error) { return v4.VirtualMemory() }
